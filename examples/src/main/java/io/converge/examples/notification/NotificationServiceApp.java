package io.converge.examples.notification;

import io.converge.examples.events.ChaosReplyFaults;
import io.converge.examples.events.ServiceCommons;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Import;

/** The notification service: tells the buyer once that the order is paid. Configuration: {@code notification.properties}. */
@SpringBootApplication
@Import({ServiceCommons.class, ChaosReplyFaults.class})
public class NotificationServiceApp {

  /** Runs the service alone, against the servers named in its configuration. */
  public static void main(String[] args) {
    new SpringApplicationBuilder(NotificationServiceApp.class).properties("spring.config.name=notification").run(args);
  }
}
