// The person's account: who and where they are, and a new password (docs/reference/tenants.md#team-api-for-the-console: every other session and token of
// theirs stops working; this one goes on).
import { Button, Paper, PasswordInput, Stack, Text, Title } from "@mantine/core";
import type { FormEvent } from "react";
import { formErrors, passwordProblem, problems, useFormFields } from "../ui/form";
import { FormAlert } from "../ui/form-parts";
import { changePassword, useSession } from "../session";
import { useAction } from "../data/actions";

export function AccountPage() {
  const session = useSession();
  const { values, setValues, errors, setErrors, field } = useFormFields({ current_password: "", new_password: "", confirm: "" });
  const changing = useAction({
    run: changePassword,
    done: () => ({ title: "Password changed", message: "Your other sessions and tokens were signed out." }),
    failed: "Could not change the password",
    // A wrong current password is a 401 that must not end this session: it belongs at its field.
    shownAt: (error) => setErrors(formErrors(error, ["current_password", "new_password"], { unauthorized: "current_password" })),
    refresh: () => [],
    onSuccess: () => setValues({ current_password: "", new_password: "", confirm: "" }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const local = problems({
      current_password: values.current_password ? undefined : "is required",
      new_password: passwordProblem(values.new_password),
      confirm: values.confirm === values.new_password ? undefined : "does not match the new password",
    });
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    changing.mutate({ current_password: values.current_password, new_password: values.new_password });
  };

  return (
    <Stack maw={520}>
      <Title order={1} size="h2">
        Account
      </Title>
      <Paper withBorder p="md">
        <Text size="sm">
          Logged in as <strong>{session.user.email}</strong>, {session.role} of <strong>{session.org.name}</strong>.
        </Text>
      </Paper>
      <Paper withBorder p="md" component="section" aria-labelledby="password-title">
        <form onSubmit={submit} noValidate>
          <Stack>
            <Title order={2} size="h4" id="password-title">
              Change password
            </Title>
            <FormAlert message={errors.form} />
            <PasswordInput label="Current password" autoComplete="current-password" {...field("current_password")} required />
            <PasswordInput label="New password" description="15 characters or more." autoComplete="new-password" {...field("new_password")} required />
            <PasswordInput label="New password, again" autoComplete="new-password" {...field("confirm")} required />
            <Button type="submit" loading={changing.isPending} style={{ alignSelf: "flex-start" }}>
              Change password
            </Button>
          </Stack>
        </form>
      </Paper>
    </Stack>
  );
}
