// Log in and sign up. Both end with a session cookie (HttpOnly, SameSite=Strict) that no script can read; signup
// creates the account with POST /auth/signup, then opens a session with the same credentials (the token signup
// returns is for API clients and is dropped unread).
import { Alert, Button, Center, Code, Divider, Paper, PasswordInput, Stack, Text, TextInput, Title } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { useState, type FormEvent, type ReactNode } from "react";
import { emailProblem, formErrors, passwordProblem, problems, useFormFields } from "../ui/form";
import { FormAlert } from "../ui/form-parts";
import { logIn, safeRedirect, signUp } from "../session";
import { useAction } from "../data/actions";
import { RouterAnchor } from "../ui/link";

function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={420} radius="md">
        <Stack>
          <div>
            <Text c="dimmed" size="sm" fw={600}>
              Conveyor
            </Text>
            <Title order={1} size="h2">
              {title}
            </Title>
          </div>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}

/** The page a login goes on to, when it is not the home page. */
function nextPage(redirect: string | undefined): string | null {
  if (!redirect) return null;
  const target = safeRedirect(redirect);
  const path = target.split(/[?#]/)[0]!;
  return path === "/" || path === "/overview" ? null : target;
}

export function LoginPage() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const search = useSearch({ from: "/login" });
  const { values, errors, setErrors, field } = useFormFields({ email: "", password: "" });
  const { email, password } = values;
  const login = useAction({
    run: async (credentials: { email: string; password: string }) => {
      await logIn(queryClient, credentials);
      await navigate({ href: safeRedirect(search.redirect) });
    },
    failed: "Could not log in",
    shownAt: (error) => setErrors(formErrors(error, ["email", "password"])),
    refresh: () => [],
  });
  const busy = login.isPending;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const local = problems({ email: emailProblem(email), password: password ? undefined : "is required" });
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    login.mutate({ email: email.trim(), password });
  };

  return (
    <AuthFrame title="Log in">
      {/* Only when a page other than the home page was asked for (a link, an expired session): a first visit to the
          console was nowhere before, so "continue where you were" would not be true. */}
      {nextPage(search.redirect) && !errors.form && (
        <Text size="sm" c="dimmed" data-testid="login-next">
          After logging in you go on to <Code>{nextPage(search.redirect)}</Code>.
        </Text>
      )}
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormAlert message={errors.form} />
          <TextInput label="Email" type="email" autoComplete="username" {...field("email")} required />
          <PasswordInput label="Password" autoComplete="current-password" {...field("password")} required />
          <Button type="submit" loading={busy}>
            Log in
          </Button>
          <Text size="sm">
            No account yet? <RouterAnchor to="/signup">Sign up</RouterAnchor>
          </Text>
        </Stack>
      </form>
      <Divider label="or" labelPosition="center" />
      <SingleSignOn returnTo={safeRedirect(search.redirect)} refused={search.sso_error} />
    </AuthFrame>
  );
}

/** Why a single sign-on came back refused, by the reason the API put in `sso_error`. */
const SSO_ERRORS: Record<string, string> = {
  not_configured: "No organization signs in this e-mail's domain with single sign-on. Log in with your password.",
  sso_not_configured: "No organization signs in this e-mail's domain with single sign-on. Log in with your password.",
  no_sign_in: "That sign-in had expired or was already used. Start again.",
  provider_error: "Your identity provider did not sign you in.",
  token_rejected: "Your identity provider's answer could not be verified. Start again, or ask your administrator.",
  email_missing: "Your identity provider did not say which e-mail address you use.",
  email_unverified: "Your identity provider has not verified your e-mail address.",
  domain_not_allowed: "Your e-mail address is not at a domain this organization signs in.",
  rate_limited: "Too many sign-ins from your address. Wait a minute and try again.",
};

/**
 * "Sign in with SSO": the work e-mail picks the organization whose provider signs in its domain. The browser goes to
 * the API's /auth/sso/start, then to the provider, and comes back logged in (or here, with `sso_error`).
 */
function SingleSignOn({ returnTo, refused }: { returnTo: string; refused?: string }) {
  const [email, setEmail] = useState("");
  const [error, setError] = useState<string | undefined>();
  const start = (event: FormEvent) => {
    event.preventDefault();
    const problem = emailProblem(email);
    setError(problem);
    if (problem) return;
    window.location.assign(`/auth/sso/start?${new URLSearchParams({ email: email.trim(), return_to: returnTo })}`);
  };
  return (
    <form onSubmit={start} noValidate aria-label="Single sign-on">
      <Stack>
        {refused && (
          <Alert color="red" role="alert" title="Single sign-on did not work">
            {SSO_ERRORS[refused] ?? "Single sign-on was refused. Start again, or log in with your password."}
          </Alert>
        )}
        <TextInput label="Work email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={error} />
        <Button type="submit" variant="default">
          Sign in with SSO
        </Button>
      </Stack>
    </form>
  );
}

export function SignupPage() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const { values, errors, setErrors, field } = useFormFields({ email: "", password: "", org_name: "" });
  const signup = useAction({
    run: async (body: { email: string; password: string; org_name: string }) => {
      await signUp(body);
      await logIn(queryClient, { email: body.email, password: body.password });
      await navigate({ to: "/overview" });
    },
    failed: "Could not create the organization",
    shownAt: (error) => setErrors(formErrors(error, ["email", "password", "org_name"], { email_taken: "email" })),
    refresh: () => [],
  });
  const busy = signup.isPending;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const orgName = values.org_name.trim();
    const local = problems({
      email: emailProblem(values.email),
      password: passwordProblem(values.password),
      org_name: !orgName ? "is required" : orgName.length > 200 ? "must be at most 200 characters long" : undefined,
    });
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    signup.mutate({ email: values.email.trim(), password: values.password, org_name: orgName });
  };

  return (
    <AuthFrame title="Create your organization">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormAlert message={errors.form} />
          <TextInput label="Email" type="email" autoComplete="username" {...field("email")} required />
          <PasswordInput
            label="Password"
            description="15 characters or more; a few words make a good one."
            autoComplete="new-password"
            {...field("password")}
            required
          />
          <TextInput label="Organization name" {...field("org_name")} required />
          <Button type="submit" loading={busy}>
            Sign up
          </Button>
          <Text size="sm">
            Already have an account? <RouterAnchor to="/login">Log in</RouterAnchor>
          </Text>
        </Stack>
      </form>
    </AuthFrame>
  );
}
