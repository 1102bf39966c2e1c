package io.converge.broker.rocketmq;

import io.converge.broker.EmbeddedServerException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.rocketmq.auth.config.AuthConfig;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * A RocketMQ configuration file of {@code ops/deploy/rocketmq} (packaged under
 * {@code io/converge/broker/rocketmq/deploy}), loaded and checked: RocketMQ ignores a key it does not know
 * (a misspelt {@code transactionCheckMax} silently keeps the default), so every key must name a setting of
 * the configuration classes the server reads the file into, as {@code MixAll.properties2Object} does.
 * Stateless.
 */
final class DeployConfig {

  /** The classes {@code BrokerStartup} reads a broker file into. */
  static final List<Class<?>> BROKER = List.of(BrokerConfig.class, NettyServerConfig.class, NettyClientConfig.class,
      MessageStoreConfig.class, AuthConfig.class);

  /** The classes {@code NamesrvStartup} and {@code ControllerStartup} read their files into. */
  static final List<Class<?>> NAMESRV = List.of(NamesrvConfig.class, NettyServerConfig.class,
      NettyClientConfig.class, ControllerConfig.class);

  private static final String ROOT = "/io/converge/broker/rocketmq/deploy/";

  private DeployConfig() {
  }

  /**
   * The file {@code name} (relative to {@code ops/deploy/rocketmq}, e.g. {@code 2m/broker-a.properties}).
   *
   * @throws EmbeddedServerException when it is missing, unreadable or has a key none of {@code classes} knows
   */
  static Properties load(String name, List<Class<?>> classes) {
    Properties p = new Properties();
    try (InputStream in = DeployConfig.class.getResourceAsStream(ROOT + name)) {
      if (in == null) {
        throw new EmbeddedServerException("No RocketMQ configuration ops/deploy/rocketmq/" + name
            + " on the classpath (packaged by broker-embedded under " + ROOT + ")");
      }
      p.load(in);
    } catch (IOException e) {
      throw new EmbeddedServerException("Cannot read ops/deploy/rocketmq/" + name, e);
    }
    for (String key : p.stringPropertyNames()) {
      if (!known(key, classes)) {
        throw new EmbeddedServerException("ops/deploy/rocketmq/" + name + ": '" + key + "' is no setting of "
            + classes.stream().map(Class::getSimpleName).toList() + " (RocketMQ would ignore it)");
      }
    }
    return p;
  }

  private static boolean known(String key, List<Class<?>> classes) {
    String setter = "set" + Character.toUpperCase(key.charAt(0)) + key.substring(1);
    return classes.stream().flatMap(c -> Arrays.stream(c.getMethods())).map(Method::getName)
        .anyMatch(setter::equals);
  }
}
