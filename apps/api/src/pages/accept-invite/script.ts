// The invite page's script, served as a separate file so the page's CSP can forbid inline script.
// Plain ES2017 for any phone browser; it writes only with textContent. URLs are relative to the page, so
// the API may sit under a path prefix behind a proxy. After a successful accept it logs the person in to a console
// session with the password they just typed (the cookie is HttpOnly: this script never sees it) and opens the console.
export const acceptInviteJs = `"use strict";
(function () {
  var MIN_CHARACTERS = 15;
  var MAX_BYTES = 72;
  var TITLES = {
    invite_not_found: "Invalid invite link",
    invite_expired: "Invite expired",
    invite_used: "Invite already used",
    rate_limited: "Too many attempts",
    validation_failed: "Incomplete invite link"
  };

  function $(id) { return document.getElementById(id); }
  function show(id) {
    ["loading", "invite", "done", "failed"].forEach(function (s) { $(s).hidden = s !== id; });
  }
  function fail(code, message) {
    $("failed-title").textContent = TITLES[code] || "Something went wrong";
    $("failed-text").textContent = message || "Please try again later.";
    show("failed");
  }
  function errorOf(body) {
    return body && body.error ? body.error : { code: "internal_error", message: "The server gave an unexpected answer." };
  }
  function request(url, options) {
    return fetch(url, options).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) { return { ok: res.ok, status: res.status, body: body }; });
    });
  }

  var token = new URLSearchParams(window.location.search).get("token");
  if (!token) {
    fail("validation_failed", "The link has no invite token. Open the full link from your invitation.");
    return;
  }

  var invite;
  request("invite?token=" + encodeURIComponent(token), { headers: { Accept: "application/json" }, credentials: "omit", cache: "no-store" })
    .then(function (r) {
      if (!r.ok) { var e = errorOf(r.body); return fail(e.code, e.message); }
      invite = r.body;
      $("org-name").textContent = invite.org_name;
      // Wrapping only before its "@" or a dot (never inside a word), as the console shows addresses.
      invite.email.split(/(?=[@.])/).forEach(function (part, i) {
        if (i > 0) $("invite-email").appendChild(document.createElement("wbr"));
        $("invite-email").appendChild(document.createTextNode(part));
      });
      $("invite-role").textContent = invite.role === "admin" ? "an admin" : "a member";
      $("role-means").textContent = invite.role === "admin"
        ? "Admins run jobs, invite members and manage API keys and webhooks."
        : "Members run and follow jobs and schedules, and make their own API keys.";
      // For password managers: the account the new password belongs to.
      $("username").value = invite.email;
      var expires = new Date(invite.expires_at);
      $("expires-at").textContent = expires.toLocaleString();
      $("expires-at").setAttribute("datetime", invite.expires_at);
      show("invite");
      $("password").focus();
    })
    .catch(function () { fail("internal_error", "The server could not be reached. Check your connection and reload the page."); });

  function formError(message) {
    $("form-error").textContent = message;
    $("form-error").hidden = !message;
  }

  $("show-password").addEventListener("change", function () {
    $("password").type = this.checked ? "text" : "password";
  });

  $("accept-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var password = $("password").value;
    if (Array.from(password).length < MIN_CHARACTERS) return formError("The password must be at least " + MIN_CHARACTERS + " characters long.");
    if (new TextEncoder().encode(password).length > MAX_BYTES) return formError("The password must be at most " + MAX_BYTES + " bytes long; use fewer or simpler characters.");
    formError("");
    $("submit").disabled = true;
    request("invite/accept", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      credentials: "omit",
      body: JSON.stringify({ token: token, password: password })
    })
      .then(function (r) {
        if (!r.ok) {
          $("submit").disabled = false;
          var e = errorOf(r.body);
          if (e.code === "invite_not_found" || e.code === "invite_expired" || e.code === "invite_used") return fail(e.code, e.message);
          return formError(e.message);
        }
        var joined = r.body;
        // The link is spent: keep it out of the address bar and history.
        history.replaceState(null, "", window.location.pathname);
        return request("auth/session", {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "application/json" },
          credentials: "same-origin",
          body: JSON.stringify({ email: joined.user.email, password: password, org_id: joined.org.id })
        }).then(function (s) { return s.ok; }, function () { return false; }).then(function (loggedIn) {
          $("password").value = "";
          // Into the console, replacing this page in the history.
          if (loggedIn) return window.location.replace(new URL(".", window.location.href).href);
          // Joined, but not logged in (e.g. too many logins from this address): say so, and where to log in.
          $("done-text").textContent = "You joined " + invite.org_name + " as " + joined.user.role + " (" + joined.user.email + ").";
          show("done");
        });
      })
      .catch(function () {
        $("submit").disabled = false;
        formError("The server could not be reached. Check your connection and try again.");
      });
  });

})();
`;
