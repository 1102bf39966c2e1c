package io.converge.console.web;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium driven by Selenium: Debian's {@code chromium} and {@code chromium-driver} packages
 * ({@code .ci/run} installs them when missing). Their absence fails the test with what to install; it never
 * skips. Selenium Manager (which downloads drivers) is never used: the driver is the installed one.
 */
final class Browser {

  private static final List<String> BROWSERS = List.of("chromium", "chromium-browser", "google-chrome");
  private static final List<String> DRIVERS = List.of("chromedriver");

  private Browser() {
  }

  /** A new headless browser, 1280x860. */
  static ChromeDriver start() {
    Path browser = find(BROWSERS).orElseThrow(() -> new AssertionError("No Chromium on the PATH (looked for "
        + BROWSERS + "): the console's browser test needs it. Install Debian's packages: apt-get install -y"
        + " chromium chromium-driver (.ci/run does it)"));
    Path driver = find(DRIVERS).orElseThrow(() -> new AssertionError("No chromedriver on the PATH: the console's"
        + " browser test needs it. Install Debian's packages: apt-get install -y chromium chromium-driver"
        + " (.ci/run does it)"));
    ChromeOptions options = new ChromeOptions();
    options.setBinary(browser.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--window-size=1280,860", "--disable-extensions", "--no-first-run", "--lang=en-US");
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile())
        .usingAnyFreePort().withTimeout(Duration.ofSeconds(30)).build();
    ChromeDriver chrome = new ChromeDriver(service, options);
    chrome.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
    return chrome;
  }

  private static Optional<Path> find(List<String> names) {
    String path = System.getenv().getOrDefault("PATH", "");
    for (String name : names) {
      for (String dir : path.split(File.pathSeparator)) {
        Path candidate = Path.of(dir, name);
        if (Files.isExecutable(candidate)) {
          return Optional.of(candidate);
        }
      }
    }
    return Optional.empty();
  }
}
