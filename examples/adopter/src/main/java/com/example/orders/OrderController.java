package com.example.orders;

import io.converge.consumer.http.Idempotent;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders}: a client retrying with the same {@code Idempotency-Key} places one order. */
@RestController
class OrderController {

  private final OrderService orders;

  OrderController(OrderService orders) {
    this.orders = orders;
  }

  record PlaceOrder(String sku, int quantity) {
  }

  @Idempotent
  @PostMapping("/orders")
  @ResponseStatus(HttpStatus.CREATED)
  Map<String, String> place(@RequestBody PlaceOrder request) {
    return Map.of("orderId", orders.place(request.sku(), request.quantity()));
  }
}
