package io.converge.ops.bench.peer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurationImportFilter;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * A Spring Boot application on the bench's class path (the examples' services) gets none of Spring Modulith's
 * auto-configurations, and keeps Spring Boot's own: the filter is registered where Spring Boot looks for it.
 */
class NoPeerAutoConfigurationTest {

  @Test
  void springBootApplicationsOnTheBenchClassPathGetNoModulithAutoConfiguration() {
    String[] candidates = {"org.springframework.modulith.events.config.EventPublicationAutoConfiguration",
        "org.springframework.modulith.events.jdbc.JdbcEventPublicationAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration", null};
    List<AutoConfigurationImportFilter> filters = SpringFactoriesLoader.forDefaultResourceLocation()
        .load(AutoConfigurationImportFilter.class);
    AutoConfigurationImportFilter ours = filters.stream().filter(NoPeerAutoConfiguration.class::isInstance)
        .findFirst().orElseThrow(() -> new AssertionError("not registered in META-INF/spring.factories: " + filters));
    assertThat(ours.match(candidates, null)).containsExactly(false, false, true, true);
  }
}
