package io.converge.examples.jpa;

import jakarta.persistence.MappedSuperclass;
import jakarta.persistence.Version;

/**
 * An entity whose row carries a {@code version bigint NOT NULL DEFAULT 0} column: JPA's optimistic lock, so that a
 * write of a stale copy fails instead of overwriting, and the examples' conditional updates can compare and swap on
 * it ({@code … WHERE version = ?}). The version is a {@code Long}, null until the entity is first persisted (JPA then
 * sets it to 0): that is how Spring Data's {@code save} tells a new entity, which it persists (one {@code INSERT}, a
 * duplicate key refused by the database), from a stored one, which it merges ({@code SELECT} and {@code UPDATE}). Not
 * thread-safe (an entity belongs to one persistence context).
 */
@MappedSuperclass
public abstract class VersionedEntity {

  @Version
  private Long version;

  /**
   * The version last read or written; null while the entity is new (Spring Data reads it, through this getter, to
   * tell a new entity from a stored one).
   */
  public Long getVersion() {
    return version;
  }
}
