// The invite page's markup. Static: everything that depends on the invite is filled in by script.ts with
// textContent, so nothing an inviter typed (an org name) is ever parsed as HTML.
export const acceptInviteHtml = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex">
  <link rel="icon" href="data:,">
  <title>Accept your invite · Conveyor</title>
  <link rel="stylesheet" href="accept-invite.css">
  <script src="accept-invite.js" defer></script>
</head>
<body>
  <main class="card">
    <p class="brand">Conveyor</p>

    <section id="loading" aria-live="polite">
      <p>Checking your invite…</p>
    </section>

    <section id="invite" hidden>
      <h1>Join <span id="org-name"></span></h1>
      <p><strong id="invite-email"></strong> is invited to join as <strong id="invite-role"></strong>.</p>
      <p id="role-means" class="muted"></p>
      <p class="muted">This link works once and expires on <time id="expires-at"></time>.</p>
      <form id="accept-form" novalidate>
        <input id="username" name="username" type="email" autocomplete="username" hidden readonly>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="15" aria-describedby="password-rule">
        <p id="password-rule" class="muted">At least 15 characters (72 bytes at most). If this email already has a Conveyor account, enter that account's current password.</p>
        <label class="inline"><input id="show-password" type="checkbox"> Show password</label>
        <p id="form-error" class="error" role="alert" hidden></p>
        <button id="submit" type="submit">Accept invite</button>
      </form>
    </section>

    <section id="done" hidden>
      <h1>You're in</h1>
      <p id="done-text"></p>
      <p><a id="console-link" href="./">Log in to the console</a> with your email and this password.</p>
    </section>

    <section id="failed" hidden>
      <h1 id="failed-title"></h1>
      <p id="failed-text"></p>
    </section>
  </main>
</body>
</html>
`;
