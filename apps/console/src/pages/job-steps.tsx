// A job's durable steps, sleeps and waits (docs/reference/lifecycle.md#waitpoints-and-durable-steps) under its attempts: which attempt ran each, when, and how it
// stands — a succeeded step is never run again, a sleep or wait shows what it waits for.
import { Badge, Group, Stack, Text } from "@mantine/core";
import type { ResponseBody } from "@conveyor/client";
import { Time } from "../ui/format";

type Step = ResponseBody<"/jobs/{id}", "get">["steps"][number];

const COLORS: Record<Step["status"], string> = { succeeded: "green", completed: "green", sleeping: "blue", waiting: "blue", failed: "red" };

export function JobSteps({ steps }: { steps: Step[] }) {
  if (steps.length === 0) return null;
  return (
    <Stack gap={4} aria-label="Steps" role="list">
      <Text fw={600} size="sm">
        Steps
      </Text>
      {steps.map((step) => (
        <Group key={step.name} gap="xs" role="listitem" data-testid={`step-${step.name}`}>
          {/* A coloured dot beside text in the body colour, as the job's status badge: readable whatever the colour. */}
          <Badge color={COLORS[step.status]} variant="dot" miw="max-content">
            {step.status}
          </Badge>
          <Text size="sm">
            {step.kind === "step" ? "Step" : step.kind === "sleep" ? "Sleep" : "Wait"} <code>{step.name}</code> · attempt {step.attempt} · started{" "}
            <Time iso={step.started_at} />
            {step.finished_at ? (
              <>
                {" "}
                · ended <Time iso={step.finished_at} />
              </>
            ) : step.wake_at ? (
              <>
                {" "}
                · until <Time iso={step.wake_at} />
              </>
            ) : step.waitpoint_id ? (
              <> · on waitpoint …{step.waitpoint_id.slice(-8)}</>
            ) : null}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}
