/** The console's stylesheet, served as /console/assets/console.<hash>.css (assets/served-assets.ts) (no inline style: the CSP allows none). */
export const CONSOLE_STYLE = `
:root { --fg: #111827; --muted: #4b5563; --line: #d1d5db; --bg: #f9fafb; --accent: #1d4ed8; --bad: #b91c1c; --good: #15803d; --test: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
header.top { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.2rem; background: #fff; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header.top .brand { font-weight: 700; margin-right: .5rem; }
nav.main { display: flex; gap: .9rem; flex-wrap: wrap; }
nav.main a { text-decoration: none; padding: .2rem 0; }
nav.main a[aria-current="page"] { font-weight: 700; border-bottom: 2px solid var(--accent); }
.find { display: flex; gap: .3rem; }
.find input { min-width: 0; }
.mode { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: .6rem; font-size: 12px; font-weight: 600; border: 1px solid currentColor; }
.badge.test { color: var(--test); } .badge.live { color: var(--good); }
.badge.bad { color: var(--bad); } .badge.good { color: var(--good); } .badge.muted { color: var(--muted); }
main { padding: 1.2rem; max-width: 1200px; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; } h2 { font-size: 1.1rem; margin: 1.4rem 0 .6rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: .8rem; margin-bottom: 1rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: .4rem; padding: .8rem; }
.card .value { font-size: 1.4rem; font-weight: 700; }
.card .label { color: var(--muted); }
.panel { background: #fff; border: 1px solid var(--line); border-radius: .4rem; padding: .8rem; margin-bottom: 1rem; overflow-x: auto; }
.chart { min-height: 240px; }
.chart-numbers summary { cursor: pointer; color: var(--accent); }
.chart-numbers table { margin-top: .4rem; }
figure { margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
/* A long URL breaks inside its cell rather than widening the page; a form field is never wider than the page. */
.url { overflow-wrap: anywhere; }
input, select { max-width: 100%; }
form.filters > div { min-width: 0; max-width: 100%; }
th { color: var(--muted); font-weight: 600; }
tbody td:first-child, tbody th:first-child { min-width: 9rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f3f4f6; padding: .6rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
form.inline { display: inline; }
form.action { margin-top: .8rem; }
form.filters { display: flex; gap: .6rem; flex-wrap: wrap; align-items: end; margin-bottom: .8rem; }
label { display: block; font-weight: 600; margin-bottom: .2rem; }
input, select { font: inherit; padding: .3rem .4rem; border: 1px solid #6b7280; border-radius: .25rem; }
button { font: inherit; padding: .3rem .7rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: .25rem; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.notice { padding: .6rem .8rem; border-radius: .3rem; margin-bottom: 1rem; border: 1px solid var(--line); background: #fff; }
.notice.error { border-color: var(--bad); color: var(--bad); }
.notice.ok { border-color: var(--good); color: var(--good); }
progress { width: 12rem; }
.muted { color: var(--muted); }
.signin { max-width: 28rem; margin: 3rem auto; }
.signin form { margin-bottom: 1.4rem; }
.signin input { width: 100%; margin-bottom: .6rem; }
/* A table cannot scroll inside itself: on a narrow window it scrolls as a block instead of widening the page (the script makes it a tab stop while it overflows, so keys scroll it too). */
@media (max-width: 760px) { table.panel { display: block; overflow-x: auto; } }
/* A listing's page: its model card, with what inspection found beside it (one column on a narrow window). */
.listing-page { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; align-items: start; }
.listing-page.single { grid-template-columns: minmax(0, 1fr); }
@media (max-width: 760px) { .listing-page { grid-template-columns: minmax(0, 1fr); } }
.readme img { max-width: 100%; }
.panel > h3:first-child { margin-top: 0; }
/* What inspection found: keys in a narrow column, values wrapping; a nested table (a list of inputs, a record of operators) sits inside its cell with room on every side. */
table.inspection > tbody > tr > th { width: 1%; min-width: 6rem; padding-left: 0; }
table.inspection > tbody > tr > td { overflow-wrap: break-word; padding-right: 0; }
table.nested td { overflow-wrap: break-word; }
table.inspection > tbody > tr:last-child > * { border-bottom: 0; }
table.nested { width: auto; min-width: 60%; margin: .1rem 0 .3rem; font-size: 13px; border: 1px solid var(--line); border-radius: .3rem; border-collapse: separate; border-spacing: 0; background: var(--bg); }
table.nested th, table.nested td { padding: .2rem .5rem; min-width: 0; }
table.nested tbody td:first-child, table.nested tbody th:first-child { min-width: 0; }
table.nested tr:last-child > * { border-bottom: 0; }
table.pairs { min-width: 0; }
table.pairs th { font-weight: 500; color: var(--fg); }
table.pairs td.num { padding-left: 1.2rem; }
ul.values { margin: 0; padding-left: 1.1rem; }
/* A URDF robot: the 3D view with its joint tree beside it (stacked on a narrow window). */
.robot-layout { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 1rem; align-items: start; }
@media (max-width: 760px) { .robot-layout { grid-template-columns: minmax(0, 1fr); } }
.robot-view { margin: 0; }
.robot-canvas { min-height: 420px; border: 1px solid var(--line); border-radius: .3rem; overflow: hidden; background: #f3f4f6; }
.robot-canvas canvas { display: block; }
.robot-canvas > p { margin: 1rem; }
.robot-tree h4 { margin: 0 0 .4rem; }
ul.joint-tree, ul.joint-tree ul { list-style: none; margin: 0; padding-left: 1.1rem; }
ul.joint-tree { padding-left: 0; }
ul.joint-tree li { margin: .15rem 0; }
ul.joint-tree ul { border-left: 1px solid var(--line); margin-left: .35rem; padding-left: .8rem; }
ul.joint-tree .link { font-weight: 600; }
ul.joint-tree .joint { display: block; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
