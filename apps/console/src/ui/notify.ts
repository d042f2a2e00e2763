// Notifications with a named close button (Mantine's has only an icon).
import { notifications, type NotificationData } from "@mantine/notifications";

export function notify(data: NotificationData): void {
  notifications.show({ ...data, closeButtonProps: { "aria-label": "Dismiss notification" } });
}
