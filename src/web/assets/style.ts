// The pages' one stylesheet, served as /ui/assets/style.css (CSP `default-src 'self'`: no inline style, no web
// font, nothing from another origin). System fonts; readable on a narrow screen; a visible focus ring (WCAG 2.2 2.4.7).

export const PAGE_STYLESHEET = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --ok: #116329; --ok-bg: #dafbe1; --bad: #a40e26; --bad-bg: #ffebe9; --warn: #7d4e00; --warn-bg: #fff8c5;
  --link: #0550ae; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  color: var(--ink); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid #0969da; outline-offset: 2px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 0.9em; }
.mono, .digest { overflow-wrap: anywhere; word-break: break-all; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem; overflow: auto;
  max-height: 28rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 0.5rem; top: 0.5rem; background: var(--bg); padding: 0.25rem 0.5rem; z-index: 1; }
header.site { border-bottom: 1px solid var(--line); background: var(--panel); }
header.site nav { max-width: 64rem; margin: 0 auto; padding: 0.6rem 1rem; display: flex; gap: 1.25rem;
  flex-wrap: wrap; align-items: baseline; }
header.site .brand { font-weight: 700; color: var(--ink); text-decoration: none; font-size: 1.1rem; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
footer { max-width: 64rem; margin: 2rem auto 1rem; padding: 0 1rem; color: var(--muted); font-size: 0.875rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0 0.75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin: 1.75rem 0 0.5rem; }
h3 { font-size: 1.05rem; margin: 0 0 0.25rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--line); }
th { font-size: 0.875rem; color: var(--muted); font-weight: 600; }
form.search { display: flex; gap: 0.5rem; flex-wrap: wrap; margin: 0.5rem 0 1rem; }
form.search input[type=search] { flex: 1 1 16rem; }
input, select, button { font: inherit; padding: 0.35rem 0.6rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--ink); }
button { background: var(--panel); cursor: pointer; }
form.compare { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: center; }
.badge { display: inline-block; padding: 0 0.45rem; border-radius: 1rem; font-size: 0.8rem; font-weight: 600;
  border: 1px solid var(--line); white-space: nowrap; }
.badge.active { color: var(--ok); background: var(--ok-bg); }
.badge.yanked { color: var(--bad); background: var(--bad-bg); }
.notice { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; padding: 0.6rem 0.8rem;
  margin: 0.75rem 0; }
.notice.yanked, .notice.error { border-left-color: var(--bad); background: var(--bad-bg); }
.notice.info { border-left-color: var(--link); background: var(--panel); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 36rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: 0.4rem; } }
.tool { border: 1px solid var(--line); border-radius: 8px; padding: 0.8rem 1rem; margin: 0.75rem 0; }
.tool .description { white-space: pre-wrap; overflow-wrap: anywhere; }
.tool .tool-name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
ul.words { margin: 0.25rem 0; padding-left: 1.25rem; }
ul.words li.no-claim { color: var(--warn); }
details { margin: 0.4rem 0; }
summary { cursor: pointer; }
section.verify { border: 2px solid var(--line); border-radius: 8px; padding: 0.8rem 1rem; margin: 1rem 0; }
section.verify[data-state=passed] { border-color: var(--ok); }
section.verify[data-state=failed] { border-color: var(--bad); }
section.verify h2 { margin-top: 0; }
ol.checks { list-style: none; padding: 0; margin: 0.5rem 0; }
ol.checks li { padding: 0.35rem 0; border-bottom: 1px solid var(--line); display: flex; gap: 0.6rem; flex-wrap: wrap; }
ol.checks .state { font-weight: 700; min-width: 5.5rem; }
ol.checks li[data-state=passed] .state { color: var(--ok); }
ol.checks li[data-state=failed] .state { color: var(--bad); }
ol.checks .reason { flex-basis: 100%; color: var(--muted); overflow-wrap: anywhere; font-size: 0.9rem; }
.summary[data-state=passed] { color: var(--ok); font-weight: 700; }
.summary[data-state=failed] { color: var(--bad); font-weight: 700; }
ul.capability-changes { padding-left: 1.25rem; }
ul.capability-changes li.wider { color: var(--bad); }
ul.capability-changes li.wider strong { color: var(--bad); }
ul.capability-changes li.narrower { color: var(--ok); }
.change-value { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.kind-added { color: var(--bad); } .kind-removed { color: var(--ok); } .kind-changed { color: var(--warn); }
nav.pages { display: flex; gap: 1rem; margin: 1rem 0; flex-wrap: wrap; }
`;
