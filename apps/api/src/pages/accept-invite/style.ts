// The invite page's stylesheet: one column, readable on a phone, no external fonts or images.
export const acceptInviteCss = `
:root { color-scheme: light dark; --accent: #2457d6; --error: #b42318; --muted: #5c6370; --border: #d0d5dd; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: flex-start; justify-content: center;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f3f5f9; color: #1d2433; padding: 1.5rem 1rem; }
.card { width: 100%; max-width: 28rem; background: #fff; border: 1px solid var(--border); border-radius: 12px; padding: 1.5rem; box-shadow: 0 1px 3px rgba(16, 24, 40, .08); }
.brand { margin: 0 0 1rem; font-weight: 700; letter-spacing: .02em; color: var(--accent); }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 .75rem; overflow-wrap: anywhere; }
p { margin: 0 0 .75rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); font-size: .9rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
label.inline { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .25rem 0 1rem; }
input[type=password], input[type=text] { width: 100%; font: inherit; padding: .75rem; border: 1px solid var(--border); border-radius: 8px; }
input:focus, button:focus, a:focus { outline: 3px solid rgba(36, 87, 214, .35); outline-offset: 1px; }
button { width: 100%; font: inherit; font-weight: 600; padding: .8rem 1rem; border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
button[disabled] { opacity: .6; cursor: progress; }
.error { color: var(--error); background: #fef3f2; border: 1px solid #fecdca; border-radius: 8px; padding: .6rem .75rem; }
#failed h1 { color: var(--error); }
a { color: var(--accent); font-weight: 600; }
@media (prefers-color-scheme: dark) {
  body { background: #0f131a; color: #e6e9ef; }
  .card { background: #171c25; border-color: #2a3140; }
  input[type=password], input[type=text] { background: #0f131a; color: inherit; border-color: #2a3140; }
  .muted { color: #9aa3b2; }
  .error { background: #2a1414; border-color: #5c2a2a; color: #ffb4ab; }
  a { color: #9db4f5; }
}
`;
