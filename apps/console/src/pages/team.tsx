// The team (docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#team-api-for-the-console): members with their roles (the owner changes roles and removes members), pending
// invites (revocable), and a new invite whose link is shown with a copy button — the API keeps only a hash of
// the token, so the link exists only in that answer. Owners and admins only; members are told so.
import { Button, Group, NativeSelect, Select, Stack, Table, TextInput, Title } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { emailProblem, formErrors, problems, type FormErrors } from "../ui/form";
import { Email, Time } from "../ui/format";
import { ShownOnceModal } from "../ui/secret";
import { ActionsHeader, DangerButton, ListTable, QueryList } from "../ui/list";
import { Heading, OwnersAndAdminsOnly } from "../ui/page";
import { canManageTeam, useSession } from "../session";
import { useAction } from "../data/actions";
import {
  createInvite,
  invitesKey,
  invitesRefresh,
  membersKey,
  membersRefresh,
  removeMember,
  revokeInvite,
  setMemberRole,
  useInvites,
  useMembers,
} from "../data/team";

type Member = ResponseBody<"/org/members", "get">[number];
type PendingInvite = ResponseBody<"/org/invites", "get">[number];

export function TeamPage() {
  const session = useSession();
  if (!canManageTeam(session.role)) {
    return (
      <OwnersAndAdminsOnly title="Team">You are a member of {session.org.name}. Ask an owner or an admin to invite people or change roles.</OwnersAndAdminsOnly>
    );
  }
  return (
    <Stack gap="xl">
      <Members />
      <Invites />
    </Stack>
  );
}

function Members() {
  const session = useSession();
  const owner = session.role === "owner";
  const members = useMembers();
  const removing = useConfirmedAction<Member>({
    queryKey: membersKey,
    failed: "Could not remove the member",
    run: async (member) => {
      await removeMember(member.id);
      return `${member.email} was removed.`;
    },
  });

  const roleChange = useAction({
    run: ({ member, role }: { member: Member; role: "admin" | "member" }) => setMemberRole({ userId: member.id, role }),
    done: (_, { member, role }) => `${member.email} is now ${role === "admin" ? "an admin" : "a member"}.`,
    failed: "Could not change the role",
    refresh: membersRefresh,
  });

  return (
    <Stack>
      <Title order={1} size="h2">
        Team
      </Title>
      <QueryList query={members} loading="Loading members…">
        {(data) => (
          <ListTable
            label="Members"
            minWidth={560}
            head={
              <>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th visibleFrom="sm">Joined</Table.Th>
                {owner && <ActionsHeader visibleFrom="sm" />}
              </>
            }
          >
            {data.pages
              .flatMap((page) => page.items)
              .map((member) => {
                const editable = owner && member.role !== "owner" && member.id !== session.user.id;
                return (
                  <Table.Tr key={member.id} data-member={member.email}>
                    <Table.Td>
                      <Email address={member.email} />
                    </Table.Td>
                    <Table.Td>
                      {editable ? (
                        <NativeSelect
                          aria-label={`Role of ${member.email}`}
                          data={["admin", "member"]}
                          value={member.role}
                          onChange={(e) => roleChange.mutate({ member, role: e.currentTarget.value as "admin" | "member" })}
                          size="xs"
                          w={{ base: 104, sm: 120 }}
                        />
                      ) : (
                        member.role
                      )}
                      {/* A phone has no room for a column of buttons: the removal sits under the role. */}
                      {owner && editable && (
                        <DangerButton hiddenFrom="sm" mt={6} onClick={() => removing.ask(member)} aria-label={`Remove ${member.email}`}>
                          Remove
                        </DangerButton>
                      )}
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <Time iso={member.joined_at} />
                    </Table.Td>
                    {owner && (
                      <Table.Td visibleFrom="sm">
                        {editable && (
                          <DangerButton onClick={() => removing.ask(member)} aria-label={`Remove ${member.email}`}>
                            Remove
                          </DangerButton>
                        )}
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              })}
          </ListTable>
        )}
      </QueryList>
      {members.hasNextPage && (
        <Group>
          <Button variant="default" onClick={() => void members.fetchNextPage()} loading={members.isFetchingNextPage}>
            More members
          </Button>
        </Group>
      )}
      <ConfirmAction action={removing} title="Remove this member?" confirmLabel="Remove">
        {removing.target?.email} loses access to this organization at once, and their API keys here are revoked.
      </ConfirmAction>
    </Stack>
  );
}

function Invites() {
  const session = useSession();
  const invites = useInvites();
  const [inviting, setInviting] = useState(false);
  const revoking = useConfirmedAction<PendingInvite>({
    queryKey: invitesKey,
    failed: "Could not revoke the invite",
    run: async (invite) => {
      await revokeInvite(invite.id);
      return `The invite for ${invite.email} was revoked; its link no longer works.`;
    },
  });

  return (
    <Stack>
      <Heading section action={<Button onClick={() => setInviting(true)}>Invite someone</Button>}>
        Pending invites
      </Heading>
      <QueryList
        query={invites}
        loading="Loading invites…"
        empty={{ title: "No pending invites", children: "Invite a teammate: you get a link to hand over, valid for 72 hours." }}
      >
        {(rows) => (
          <ListTable
            label="Pending invites"
            minWidth={560}
            head={
              <>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th visibleFrom="sm">Expires</Table.Th>
                <ActionsHeader />
              </>
            }
          >
            {rows.map((invite) => (
              <Table.Tr key={invite.id} data-invite={invite.email}>
                <Table.Td>
                  <Email address={invite.email} />
                </Table.Td>
                <Table.Td>{invite.role}</Table.Td>
                <Table.Td visibleFrom="sm">
                  <Time iso={invite.expires_at} />
                </Table.Td>
                <Table.Td>
                  <DangerButton onClick={() => revoking.ask(invite)} aria-label={`Revoke the invite for ${invite.email}`}>
                    Revoke
                  </DangerButton>
                </Table.Td>
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      <InviteForm opened={inviting} owner={session.role === "owner"} onClose={() => setInviting(false)} />
      <ConfirmAction action={revoking} title="Revoke this invite?" confirmLabel="Revoke">
        The link sent to {revoking.target?.email} stops working.
      </ConfirmAction>
    </Stack>
  );
}

function InviteForm({ opened, owner, onClose }: { opened: boolean; owner: boolean; onClose(): void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [link, setLink] = useState<string | null>(null);
  const inviting = useAction({
    run: createInvite,
    failed: "Could not create the invite",
    shownAt: (error) => setErrors(formErrors(error, ["email", "role"], { already_member: "email" })),
    refresh: invitesRefresh,
    onSuccess: (invite) => setLink(invite.invite_url),
  });
  const close = () => {
    setEmail("");
    setRole("member");
    setErrors({ fields: {} });
    setLink(null);
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const local = problems({ email: emailProblem(email) });
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    inviting.mutate({ email: email.trim(), role });
  };
  return (
    <ShownOnceModal
      opened={opened}
      onClose={close}
      title="Invite a teammate"
      shown={
        link
          ? {
              title: "Invite link",
              label: "Invite link",
              value: link,
              note: "Send this link to your teammate yourself. It works once, for 72 hours; it is not shown again.",
            }
          : null
      }
      formError={errors.form}
      busy={inviting.isPending}
      submitLabel="Create invite"
      onSubmit={submit}
    >
      <TextInput
        label="Email"
        type="email"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
        error={errors.fields.email}
        data-autofocus
        required
      />
      <Select
        label="Role"
        data={owner ? ["member", "admin"] : ["member"]}
        value={role}
        onChange={(value) => setRole(value === "admin" ? "admin" : "member")}
        allowDeselect={false}
        error={errors.fields.role}
        description={owner ? undefined : "Admins invite members; the owner can invite admins."}
      />
    </ShownOnceModal>
  );
}
