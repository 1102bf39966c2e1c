package io.converge.core.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.SigningKeys;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code converge.signing.*}: the {@code SigningKeys} bean, rotation, bad values refused, secrets never printed. */
class ConvergeSigningAutoConfigurationTest {

  private static final String OLD = "an old secret of at least thirty-two bytes";
  private static final String NEW = "the new secret, also thirty-two bytes or more";

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(ConvergeSigningAutoConfiguration.class));

  @Test
  void theCurrentKeySignsAndEveryActiveKeyVerifiesDuringARotation() {
    runner.withPropertyValues("converge.signing.current-key-id=k2", "converge.signing.secrets.k1=" + OLD,
        "converge.signing.secrets.k2=" + NEW).run(context -> {
          SigningKeys keys = context.getBean(SigningKeys.class);
          assertThat(keys.current().id()).isEqualTo("k2");
          assertThat(keys.active("k1")).as("the old key still verifies").isNotNull();
          assertThat(keys.active("k3")).isNull();
          String printed = context.getBean(SigningProperties.class).toString() + keys;
          assertThat(printed).contains("k1", "k2").doesNotContain(OLD, NEW);
        });
  }

  @Test
  void withoutAKeyIdNoKeysAndAnApplicationsOwnBeanWins() {
    runner.run(context -> assertThat(context).doesNotHaveBean(SigningKeys.class));
    SigningKeys own = SigningKeys.of("mine", java.util.Map.of("mine", NEW.getBytes()));
    runner.withBean(SigningKeys.class, () -> own).withPropertyValues("converge.signing.current-key-id=k1",
        "converge.signing.secrets.k1=" + OLD).run(
            context -> assertThat(context.getBean(SigningKeys.class))
                .isSameAs(own));
  }

  @Test
  void badValuesFailTheStartNamingTheProperty() {
    runner.withPropertyValues("converge.signing.current-key-id=k9", "converge.signing.secrets.k1=" + OLD)
        .run(context -> assertThat(context).getFailure().rootCause()
            .hasMessageContaining(
                "converge.signing.current-key-id must be one of the ids of converge.signing.secrets [k1], but "
                    + "was 'k9'"));
    runner.withPropertyValues("converge.signing.current-key-id=k1", "converge.signing.secrets.k1=short")
        .run(context -> assertThat(context).getFailure()
            .hasStackTraceContaining("converge.signing.secrets.k1: signing.key 'k1' secret must be at least 32")
            .satisfies(e -> assertThat(e.toString()).doesNotContain("short")));
    runner.withPropertyValues("converge.signing.secrets.k1=" + OLD)
        .run(context -> assertThat(context).getFailure().rootCause()
            .hasMessageContaining("converge.signing.current-key-id must be set"));
  }
}
