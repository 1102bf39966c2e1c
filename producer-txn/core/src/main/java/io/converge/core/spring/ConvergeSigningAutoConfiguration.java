package io.converge.core.spring;

import io.converge.core.SigningKeys;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@link SigningKeys} bean of {@code converge.signing.*} ({@link SigningProperties}), when
 * {@code converge.signing.current-key-id} is set: the producer signs with it ({@code converge.producer.sign=true}), the
 * {@code @IdempotentConsumer} handlers verify with it ({@code converge.consumer.require-signature=true}). An
 * application's own {@code SigningKeys} bean (e.g. reading a secret store that rotates at run time) wins.
 */
@AutoConfiguration
@EnableConfigurationProperties(SigningProperties.class)
class ConvergeSigningAutoConfiguration {

  ConvergeSigningAutoConfiguration(SigningProperties properties) {
    if (properties.currentKeyId() == null) {
      properties.signingKeys(); // secrets without a current key id are refused, not ignored
    }
  }

  @Bean
  @ConditionalOnMissingBean(SigningKeys.class)
  @ConditionalOnProperty(prefix = "converge.signing", name = "current-key-id")
  SigningKeys convergeSigningKeys(SigningProperties properties) {
    return properties.signingKeys();
  }
}
