// Alerts (docs/reference/time.md#alerts): what the organization's alert rules fired, firing first then newest, for every member; and, for
// owners and admins, the rules with their state and what their last evaluation saw, each with a silence switch
// (an hour, or lifted). Rules are made through the API (README "Alerts"); read again every few seconds.
import { Badge, Button, Stack, Table, Text, Title } from "@mantine/core";
import type { ResponseBody } from "@conveyor/client";
import { useAction } from "../data/actions";
import { alertsRefresh, silenceRule, useAlertRules, useAlerts } from "../data/alerts";
import { canManageTeam, useSession } from "../session";
import { Time } from "../ui/format";
import { ActionsHeader, ListTable, QueryList } from "../ui/list";

type Rule = ResponseBody<"/alert-rules", "get">[number];

const SILENCE_SECONDS = 3_600;

export function AlertsPage() {
  const session = useSession();
  const alerts = useAlerts();
  return (
    <Stack>
      <Title order={1} size="h2">
        Alerts
      </Title>
      <Text c="dimmed" size="sm">
        An alert fires once its rule&apos;s condition has held for the rule&apos;s window, and resolves once it has been clear as long.
      </Text>
      <QueryList
        query={alerts}
        loading="Loading alerts…"
        empty={{ title: "No alert has fired", children: "Alerts your rules fire show here, firing and resolved." }}
      >
        {(rows) => (
          <ListTable
            label="Alerts"
            head={
              <>
                <Table.Th>Rule</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th visibleFrom="sm">What was seen</Table.Th>
                <Table.Th>Fired</Table.Th>
                <Table.Th visibleFrom="sm">Resolved</Table.Th>
              </>
            }
          >
            {[...rows]
              .sort((a, b) => Number(b.status === "firing") - Number(a.status === "firing"))
              .map((alert) => (
                <Table.Tr key={alert.id} data-alert-id={alert.id} data-status={alert.status}>
                  <Table.Td>{alert.rule_name}</Table.Td>
                  <Table.Td>
                    <Badge color={alert.status === "firing" ? "red" : "green"} variant="light">
                      {alert.status === "firing" ? "Firing" : "Resolved"}
                    </Badge>
                    {alert.silenced && (
                      <Text span size="xs" c="dimmed">
                        {" "}
                        silenced
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td visibleFrom="sm" style={{ overflowWrap: "anywhere" }}>
                    {alert.summary.split(" — ").at(-1)}
                  </Table.Td>
                  <Table.Td>
                    <Time iso={alert.fired_at} />
                  </Table.Td>
                  <Table.Td visibleFrom="sm">{alert.resolved_at ? <Time iso={alert.resolved_at} /> : "—"}</Table.Td>
                </Table.Tr>
              ))}
          </ListTable>
        )}
      </QueryList>
      {canManageTeam(session.role) && <Rules />}
    </Stack>
  );
}

function Rules() {
  const rules = useAlertRules();
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Rules
      </Title>
      <QueryList
        query={rules}
        loading="Loading rules…"
        empty={{ title: "No alert rule", children: "Make one with POST /alert-rules (see the README's Alerts section)." }}
      >
        {(rows) => (
          <ListTable
            label="Alert rules"
            head={
              <>
                <Table.Th>Rule</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th visibleFrom="sm">Last seen</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((rule) => (
              <RuleRow key={rule.id} rule={rule} />
            ))}
          </ListTable>
        )}
      </QueryList>
    </Stack>
  );
}

function RuleRow({ rule }: { rule: Rule }) {
  const silenced = rule.silenced_until !== null && new Date(rule.silenced_until) > new Date();
  const silence = useAction({
    run: (seconds: number) => silenceRule({ id: rule.id, seconds }),
    done: (_, seconds) => (seconds ? `“${rule.name}” silenced for an hour.` : `“${rule.name}” is no longer silenced.`),
    failed: "Could not change the silence",
    refresh: alertsRefresh,
  });
  return (
    <Table.Tr data-rule-id={rule.id}>
      <Table.Td>
        {rule.name}
        <Text size="xs" c="dimmed">
          {rule.condition.kind.replace(/_/g, " ")} · window {rule.window_seconds} s
        </Text>
      </Table.Td>
      <Table.Td>
        <Badge color={rule.state === "firing" ? "red" : "gray"} variant="light">
          {rule.state === "firing" ? "Firing" : "OK"}
        </Badge>
        {silenced && (
          <Text size="xs" c="dimmed" data-testid="silenced-until">
            Silenced until <Time iso={rule.silenced_until!} />
          </Text>
        )}
      </Table.Td>
      <Table.Td visibleFrom="sm" style={{ overflowWrap: "anywhere" }}>
        {rule.observation ?? "Not evaluated yet"}
      </Table.Td>
      <Table.Td>
        <Button
          size="xs"
          variant="light"
          loading={silence.isPending}
          onClick={() => silence.mutate(silenced ? 0 : SILENCE_SECONDS)}
          aria-label={`${silenced ? "Unsilence" : "Silence 1 h"} ${rule.name}`}
        >
          {silenced ? "Unsilence" : "Silence 1 h"}
        </Button>
      </Table.Td>
    </Table.Tr>
  );
}
