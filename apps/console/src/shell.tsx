// The frame of every page behind a session: a header (organization switcher, account menu), the navigation
// (a drawer below 768 px, so the console works at 375 px), live job events, and the page itself.
import { AppShell, Burger, Group, Menu, NavLink, ScrollArea, Text, UnstyledButton, type NavLinkProps } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useQueryClient } from "@tanstack/react-query";
import { createLink, Outlet, useNavigate, useRouterState } from "@tanstack/react-router";
import { forwardRef, useEffect, type AnchorHTMLAttributes } from "react";
import { useLiveJobEvents } from "./live";
import { canManageTeam, logOut, startSession, switchOrg, useSession, type Session } from "./session";
import { useAction } from "./data/actions";
import { useNarrow } from "./ui/narrow";
import type { ConsolePage } from "@conveyor/contracts/console-pages";
import "./shell.css";

const NavAnchor = forwardRef<HTMLAnchorElement, NavLinkProps & AnchorHTMLAttributes<HTMLAnchorElement>>((props, ref) => (
  <NavLink component="a" ref={ref} {...props} />
));
NavAnchor.displayName = "NavAnchor";
const NavItem = createLink(NavAnchor);

const SECTIONS = [
  { to: "/overview", label: "Overview" },
  { to: "/jobs", label: "Jobs" },
  { to: "/queues", label: "Queues" },
  { to: "/retries", label: "Retries" },
  { to: "/workers", label: "Workers" },
  { to: "/alerts", label: "Alerts" },
  { to: "/job-types", label: "Job types" },
  { to: "/schedules", label: "Schedules" },
  { to: "/waitpoints", label: "Waitpoints" },
  { to: "/team", label: "Team", managers: true },
  { to: "/api-keys", label: "API keys" },
  { to: "/webhooks", label: "Webhooks", managers: true },
  { to: "/audit-log", label: "Audit log", managers: true },
  { to: "/usage", label: "Usage", managers: true },
  { to: "/sso", label: "Single sign-on", owners: true },
] as const;

export function Shell() {
  const session = useSession();
  const [opened, { toggle, close }] = useDisclosure(false);
  // Below the "sm" breakpoint the closed navigation is only moved off screen: inert keeps Tab and screen readers out of it.
  const narrow = useNarrow();
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  useEffect(close, [pathname, close]);
  useLiveJobEvents(session.org.id);

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        {/* First in the header: the first Tab stop of every page. */}
        <a
          href="#main"
          className="skip-link"
          onClick={(event) => {
            event.preventDefault();
            document.getElementById("main")?.focus();
          }}
        >
          Skip to content
        </a>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={opened ? "Close navigation" : "Open navigation"} />
            <Text fw={700} size="lg">
              Conveyor
            </Text>
          </Group>
          <AccountMenu session={session} />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections" inert={narrow && !opened}>
        <ScrollArea>
          {SECTIONS.filter((section) => (!("managers" in section) || canManageTeam(session.role)) && (!("owners" in section) || session.role === "owner")).map(
            (section) => (
              <NavItem key={section.to} to={section.to} label={section.label} active={pathname === section.to || pathname.startsWith(`${section.to}/`)} />
            ),
          )}
          <NavItem to="/account" label="Account" active={pathname === "/account"} />
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1} style={{ outline: "none" }}>
        {/* A page of one organization never carries its state (an open form) over to the next. */}
        <Outlet key={session.org.id} />
      </AppShell.Main>
    </AppShell>
  );
}

/** Where an organization switch lands from `pathname`: the same section when the new session may see it. */
export function landingAfterSwitch(pathname: string, next: Session): ConsolePage {
  if (pathname.startsWith("/jobs/")) return "/jobs";
  const section = SECTIONS.find((s) => s.to === pathname);
  if (pathname === "/account") return "/account";
  if (!section) return "/overview";
  if ("managers" in section && !canManageTeam(next.role)) return "/overview";
  if ("owners" in section && next.role !== "owner") return "/overview";
  return section.to;
}

function AccountMenu({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const switching = useAction({
    run: switchOrg,
    failed: "Could not switch organization",
    // The new session refreshes everything it shows itself.
    refresh: () => [],
    // The page it was on, for the new organization (issue 48 #3); a job's page is the new organization's jobs (the
    // job is the old one's), and a page the new role may not see is the overview.
    onSuccess: (next) => {
      startSession(queryClient, next);
      void navigate({ to: landingAfterSwitch(pathname, next) });
    },
  });
  const signOut = async () => {
    await logOut(queryClient).catch(() => undefined);
    await navigate({ to: "/login", search: {} });
  };
  return (
    <Menu position="bottom-end" width={260} withinPortal>
      <Menu.Target>
        <UnstyledButton style={{ minWidth: 0, textAlign: "right" }} title="Account and organization" data-testid="account-menu">
          <Text size="sm" fw={600} truncate="end" maw={{ base: 150, sm: 320 }} data-testid="org-name">
            {session.org.name}
          </Text>
          <Text size="xs" c="dimmed" truncate="end" maw={{ base: 150, sm: 320 }}>
            {session.user.email} · {session.role}
          </Text>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        {session.orgs.length > 1 && (
          <>
            <Menu.Label>Organizations</Menu.Label>
            {session.orgs.map((org) => (
              <Menu.Item key={org.id} disabled={org.id === session.org.id} onClick={() => switching.mutate(org.id)}>
                {org.name} ({org.role})
              </Menu.Item>
            ))}
            <Menu.Divider />
          </>
        )}
        <Menu.Item onClick={() => void navigate({ to: "/account" })}>Account and password</Menu.Item>
        <Menu.Item color="red" onClick={() => void signOut()}>
          Log out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
