// The console's Mantine theme: the page's (main.tsx) and the first rows' the API writes into the page's HTML
// (first-page-server.tsx), so both are drawn with the same colours.
import { Alert, createTheme, Drawer, Modal, Notification, type CSSVariablesResolver } from "@mantine/core";

// Shade 8 of indigo: links and filled buttons keep a 4.5:1 contrast with white (WCAG AA).
export const theme = createTheme({
  primaryColor: "indigo",
  primaryShade: { light: 8, dark: 5 },
  defaultRadius: "md",
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  components: {
    // Named close buttons, and text dark enough to read on tinted backgrounds.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close dialog" } } }),
    Drawer: Drawer.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close panel" } } }),
    Alert: Alert.extend({ styles: { message: { color: "var(--mantine-color-text)" } } }),
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { "aria-label": "Dismiss" } },
      styles: { description: { color: "var(--mantine-color-gray-7)" } },
    }),
  },
});

// Secondary text and error messages darker than Mantine's defaults, for a 4.5:1 contrast on white (WCAG AA).
export const cssVariables: CSSVariablesResolver = (t) => ({
  variables: {},
  light: { "--mantine-color-dimmed": t.colors.gray[7]!, "--mantine-color-error": t.colors.red[9]! },
  dark: { "--mantine-color-dimmed": t.colors.dark[1]! },
});
