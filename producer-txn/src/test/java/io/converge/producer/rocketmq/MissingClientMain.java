package io.converge.producer.rocketmq;

import io.converge.core.ConvergeException;
import io.converge.producer.TxnProducer;
import org.postgresql.ds.PGSimpleDataSource;

/** Run by {@link RocketMQBackendIT} without rocketmq-client on the classpath. */
public final class MissingClientMain {

  private MissingClientMain() {
  }

  public static void main(String[] args) {
    try {
      TxnProducer.builder().group("g").dataSource(new PGSimpleDataSource())
          .backend(RocketMQBackend.nameServer("127.0.0.1:9876")).build();
      System.out.println("BUILT (the client was found)");
    } catch (ConvergeException e) {
      System.out.println("MISSING: " + e.getMessage());
    }
  }
}
