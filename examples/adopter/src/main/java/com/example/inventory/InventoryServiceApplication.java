package com.example.inventory;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** The inventory service: reserves stock for every {@code order-created}, once. */
@SpringBootApplication
public class InventoryServiceApplication {

  public static void main(String[] args) {
    new SpringApplicationBuilder(InventoryServiceApplication.class).properties("spring.config.name=inventory")
        .run(args);
  }
}
