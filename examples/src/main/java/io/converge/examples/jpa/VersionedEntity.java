package io.converge.examples.jpa;

import jakarta.persistence.MappedSuperclass;
import jakarta.persistence.Version;

/**
 * An entity whose row carries a {@code version bigint NOT NULL DEFAULT 0} column: JPA's optimistic lock, so that a
 * write of a stale copy fails instead of overwriting, and the examples' conditional updates can compare and swap on
 * it ({@code … WHERE version = ?}). Not thread-safe (an entity belongs to one persistence context).
 */
@MappedSuperclass
public abstract class VersionedEntity {

  @Version
  private long version;

  /** The version last read or written; 0 for a new row. */
  public long getVersion() {
    return version;
  }
}
