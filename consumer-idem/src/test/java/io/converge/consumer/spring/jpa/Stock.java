package io.converge.consumer.spring.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A JPA entity that a handler changes without flushing. */
@Entity
@Table(name = "jpa_stock")
public class Stock {

  @Id
  private String sku;
  private int available;

  protected Stock() {
  }

  public Stock(String sku, int available) {
    this.sku = sku;
    this.available = available;
  }

  public int available() {
    return available;
  }

  public void reserve() {
    available--;
  }
}
