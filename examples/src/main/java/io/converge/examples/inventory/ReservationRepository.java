package io.converge.examples.inventory;

import org.springframework.data.jpa.repository.JpaRepository;

/** Reservations by order id. */
public interface ReservationRepository extends JpaRepository<Reservation, String> {
}
