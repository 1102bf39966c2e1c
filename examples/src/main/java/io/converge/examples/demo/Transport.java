package io.converge.examples.demo;

import io.converge.broker.DevPlatform;
import io.converge.examples.events.Topics;
import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code converge.*} properties that put the services on a backend's broker. */
public final class Transport {

  private Transport() {
  }

  /**
   * The broker properties of {@code backend} on {@code platform}; on RocketMQ, creates run {@code run}'s
   * topics first (on Pulsar, the broker creates them on first use).
   */
  public static Map<String, String> properties(DevPlatform platform, Backend backend, String run) {
    Map<String, String> transport = new LinkedHashMap<>();
    if (backend.onPulsar()) {
      transport.put("converge.pulsar.service-url", platform.pulsar().serviceUrl());
      return transport;
    }
    for (String topic : new Topics("-" + run).all()) {
      platform.rocketmq().createTopic(topic);
    }
    String ns = platform.rocketmq().nameServerAddress();
    transport.put("converge.producer.name-server", ns);
    transport.put("converge.outbox.name-server", ns);
    transport.put("converge.consumer.rocketmq.name-server", ns);
    return transport;
  }
}
