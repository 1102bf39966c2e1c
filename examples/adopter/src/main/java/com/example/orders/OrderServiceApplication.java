package com.example.orders;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** The order service: {@code POST /orders} places an order and publishes {@code order-created} with it. */
@SpringBootApplication
public class OrderServiceApplication {

  public static void main(String[] args) {
    new SpringApplicationBuilder(OrderServiceApplication.class).properties("spring.config.name=orders").run(args);
  }
}
