// Single sign-on settings (docs/reference/tenants.md#audit-log), for the owner: the organization's OpenID Connect provider, the e-mail domains it
// signs in, the role of a member it makes, and whether password logins stop for everyone but the owner. The API
// checks the provider when it is saved; the client secret is write-only (left empty, the stored one is kept).
import { Button, Code, Group, NativeSelect, Paper, PasswordInput, Stack, Switch, Text, TextInput, Title } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { useSession } from "../session";
import { Confirm } from "../ui/confirm";
import { formErrors, useFormFields } from "../ui/form";
import { FormAlert } from "../ui/form-parts";
import { Time } from "../ui/format";
import { useAction } from "../data/actions";
import { CopyValue } from "../ui/secret";
import { QueryList } from "../ui/list";
import { OnlyFor } from "../ui/page";
import { removeSso, saveSso, useSetSsoSettings, useSsoSettings, type SsoSettings } from "../data/sso";

type Settings = SsoSettings;

export function SsoPage() {
  const session = useSession();
  if (session.role !== "owner") {
    return (
      <OnlyFor title="Single sign-on" only="Owners only">
        The owner of {session.org.name} sets up how its members sign in.
      </OnlyFor>
    );
  }
  return <SsoSettings />;
}

function SsoSettings() {
  const settings = useSsoSettings();
  return (
    <Stack>
      <Title order={1} size="h2">
        Single sign-on
      </Title>
      <Text c="dimmed" size="sm">
        Members sign in through your company&apos;s OpenID Connect provider (Okta, Entra ID, Google Workspace, Keycloak…). A first sign-in makes them a member
        with the default role.
      </Text>
      <QueryList query={settings} loading="Loading the settings…">
        {(current) => <SsoForm current={current} />}
      </QueryList>
    </Stack>
  );
}

type Draft = { issuer: string; client_id: string; client_secret: string; email_domains: string; default_role: "member" | "admin"; enforce: boolean };

const draftOf = (current: Settings | null): Draft => ({
  issuer: current?.issuer ?? "",
  client_id: current?.client_id ?? "",
  client_secret: "",
  email_domains: current?.email_domains.join(", ") ?? "",
  default_role: current?.default_role ?? "member",
  enforce: current?.enforce ?? false,
});

function SsoForm({ current }: { current: Settings | null }) {
  const setSettings = useSetSsoSettings();
  const session = useSession();
  const { values: draft, setValues: setDraft, errors, setErrors, field } = useFormFields<Draft>(() => draftOf(current));
  const [removing, setRemoving] = useState(false);
  const saving = useAction({
    run: saveSso,
    done: () => "Single sign-on saved: the provider answered as it should.",
    failed: "Could not save single sign-on",
    shownAt: (error) => setErrors(formErrors(error, ["issuer", "client_id", "client_secret", "email_domains", "default_role", "enforce"])),
    refresh: () => [],
    onSuccess: (saved) => setSettings(saved),
  });
  const removal = useAction({
    run: removeSso,
    done: () => "Single sign-on removed: members log in with their passwords.",
    failed: "Could not remove single sign-on",
    refresh: () => [],
    onSuccess: () => {
      setSettings(null);
      setRemoving(false);
    },
  });
  const busy = saving.isPending || removal.isPending;
  useEffect(() => setDraft(draftOf(current)), [current]);
  const redirectUri = current?.redirect_uri ?? `${window.location.origin}/auth/sso/callback`;

  const save = (event: FormEvent) => {
    event.preventDefault();
    const domains = draft.email_domains
      .split(/[\s,]+/)
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean);
    const local: Record<string, string> = {};
    if (!draft.issuer.trim()) local.issuer = "is required";
    if (!draft.client_id.trim()) local.client_id = "is required";
    if (!current && !draft.client_secret) local.client_secret = "is required the first time";
    if (domains.length === 0) local.email_domains = "needs at least one domain";
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    saving.mutate({
      issuer: draft.issuer.trim(),
      client_id: draft.client_id.trim(),
      ...(draft.client_secret ? { client_secret: draft.client_secret } : {}),
      email_domains: domains,
      default_role: draft.default_role,
      enforce: draft.enforce,
    });
  };

  return (
    <>
      <Paper withBorder p="md">
        <Stack gap="xs">
          <Text size="sm" fw={600}>
            Redirect URI
          </Text>
          <Text size="sm">Register this address as the application&apos;s redirect (callback) URI at your provider.</Text>
          <Group gap="xs" wrap="nowrap" align="flex-start">
            <Code block style={{ flex: 1, wordBreak: "break-all", whiteSpace: "pre-wrap" }} data-testid="redirect-uri">
              {redirectUri}
            </Code>
            <CopyValue value={redirectUri} what="redirect URI" />
          </Group>
          {current && (
            <Text size="xs" c="dimmed">
              Last saved <Time iso={current.updated_at} />.
            </Text>
          )}
        </Stack>
      </Paper>
      <Paper withBorder p="md">
        <form onSubmit={save} noValidate aria-label="Single sign-on settings">
          <Stack>
            <FormAlert message={errors.form} />
            <TextInput
              label="Issuer"
              description="The provider's issuer URL; its discovery document is at ISSUER/.well-known/openid-configuration."
              placeholder="https://login.example.com"
              {...field("issuer")}
              required
            />
            <TextInput label="Client ID" {...field("client_id")} required />
            <PasswordInput
              label="Client secret"
              description={current ? "Stored encrypted and never shown. Leave empty to keep it." : "Stored encrypted and never shown again."}
              autoComplete="off"
              {...field("client_secret")}
              required={!current}
            />
            <TextInput
              label="E-mail domains"
              description="Addresses at these domains sign in through this provider (comma-separated)."
              placeholder="example.com, example.org"
              {...field("email_domains")}
              required
            />
            <NativeSelect
              label="Role of a new member"
              description="Given at a first sign-in; change it later on the Team page."
              data={[
                { value: "member", label: "member" },
                { value: "admin", label: "admin" },
              ]}
              value={draft.default_role}
              onChange={(e) => setDraft({ ...draft, default_role: e.currentTarget.value as Draft["default_role"] })}
            />
            <Switch
              label="Require single sign-on"
              description={`Members other than you (the owner of ${session.org.name}) can no longer log in with a password or create API keys. You keep password access to recover.`}
              checked={draft.enforce}
              onChange={(e) => setDraft({ ...draft, enforce: e.currentTarget.checked })}
            />
            <Group>
              <Button type="submit" loading={busy}>
                {current ? "Save changes" : "Set up single sign-on"}
              </Button>
              {current && (
                <Button variant="outline" color="red.9" onClick={() => setRemoving(true)}>
                  Remove single sign-on
                </Button>
              )}
            </Group>
          </Stack>
        </form>
      </Paper>
      <Confirm
        opened={removing}
        title="Remove single sign-on?"
        confirmLabel="Remove"
        loading={busy}
        onConfirm={() => removal.mutate(undefined)}
        onClose={() => setRemoving(false)}
      >
        Members log in with their passwords again. Accounts that single sign-on made have no password: they cannot log in until single sign-on is set up again.
      </Confirm>
    </>
  );
}
