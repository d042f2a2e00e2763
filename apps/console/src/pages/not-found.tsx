import { Center, Stack, Text, Title } from "@mantine/core";
import { RouterAnchor } from "../ui/link";

export function NotFound() {
  return (
    <Center py="xl" component="main">
      <Stack align="center" gap="xs">
        <Title order={1} size="h3">
          Nothing here
        </Title>
        <Text c="dimmed">This page does not exist in the console.</Text>
        <RouterAnchor to="/overview">Go to the overview</RouterAnchor>
      </Stack>
    </Center>
  );
}
