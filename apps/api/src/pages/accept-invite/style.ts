// The invite page's stylesheet: the console's own look (its login card: system fonts, a bordered white card on a
// white page, indigo buttons, the same field sizes and colours), one column, readable on a phone, no external fonts.
export const acceptInviteCss = `
:root { color-scheme: light dark; --accent: #3b5bdb; --accent-hover: #364fc7; --error: #c92a2a; --muted: #495057; --border: #dee2e6;
  --input-border: #ced4da; --text: #000; --page: #fff; --card: #fff; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--page); color: var(--text); padding: 1rem; }
.card { width: 100%; max-width: 420px; background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: 2rem;
  box-shadow: 0 1px 3px rgba(0, 0, 0, .05), 0 10px 15px -5px rgba(0, 0, 0, .05), 0 7px 7px -5px rgba(0, 0, 0, .04); }
.brand { margin: 0; font-size: .875rem; font-weight: 600; color: var(--muted); }
h1 { font-size: 1.625rem; line-height: 1.35; font-weight: 700; margin: 0 0 1rem; overflow-wrap: anywhere; }
p { margin: 0 0 .75rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); font-size: .875rem; }
#invite-email { overflow-wrap: break-word; }
label { display: block; font-size: .875rem; font-weight: 500; margin: 1rem 0 .25rem; }
label.inline { display: flex; gap: .5rem; align-items: center; margin: .25rem 0 1rem; }
input[type=password], input[type=text] { width: 100%; font: inherit; font-size: .875rem; height: 2.25rem; padding: 0 .75rem;
  border: 1px solid var(--input-border); border-radius: 8px; background: var(--card); color: inherit; }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
input[type=password]:focus, input[type=text]:focus { border-color: var(--accent); outline: none; }
button { width: 100%; font: inherit; font-size: .875rem; font-weight: 600; height: 2.25rem; padding: 0 1.125rem; border: 0; border-radius: 8px;
  background: var(--accent); color: #fff; cursor: pointer; }
button:hover { background: var(--accent-hover); }
button[disabled] { opacity: .6; cursor: progress; }
.error { color: var(--error); background: #fff5f5; border: 1px solid #ffc9c9; border-radius: 8px; padding: .6rem .75rem; font-size: .875rem; }
#failed h1 { color: var(--error); }
a { color: var(--accent); }
@media (prefers-color-scheme: dark) {
  :root { --accent: #5c7cfa; --accent-hover: #4c6ef5; --muted: #c9c9c9; --border: #424242; --input-border: #424242; --text: #c9c9c9;
    --page: #242424; --card: #2e2e2e; --error: #ff8787; }
  .error { background: #2a1414; border-color: #5c2a2a; }
  button { color: #fff; background: #364fc7; }
}
`;
