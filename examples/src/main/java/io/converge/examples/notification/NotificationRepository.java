package io.converge.examples.notification;

import org.springframework.data.jpa.repository.JpaRepository;

/** Notifications by order id. */
public interface NotificationRepository extends JpaRepository<Notification, String> {
}
