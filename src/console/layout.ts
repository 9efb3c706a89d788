import { randomUUID } from 'node:crypto';
import { assetUrl } from './assets/served-assets';
import { count, instant, money } from './format';
import { Html, html } from './html';
import { consoleRoleFor } from './operator-roles';
import type { Viewer } from './viewer';

export const CONSOLE_PATH = '/console';

export interface NavItem {
  path: string;
  label: string;
}

const OPERATOR_NAV: NavItem[] = [
  { path: '/console/overview', label: 'Overview' },
  { path: '/console/read-models', label: 'Read models' },
  { path: '/console/accounts', label: 'Accounts and keys' },
  { path: '/console/events', label: 'Event log' },
  { path: '/console/webhooks', label: 'Webhooks' },
  { path: '/console/ledger', label: 'Ledger' },
];

const CREATOR_NAV: NavItem[] = [
  { path: '/console/home', label: 'Balance' },
  { path: '/console/transactions', label: 'Transactions' },
  { path: '/console/payouts', label: 'Payouts' },
  { path: '/console/listings', label: 'Listings' },
  { path: '/console/usage', label: 'Inference usage' },
  { path: '/console/my-webhooks', label: 'Webhooks' },
];

/** The sections the viewer may open: an operator's role hides the others (console/operator-roles.ts). */
export function navFor(viewer: Pick<Viewer, 'role' | 'operator'>): NavItem[] {
  if (viewer.role !== 'operator') return CREATOR_NAV;
  const role = viewer.operator?.role ?? 'admin';
  return OPERATOR_NAV.filter((item) => {
    const needed = consoleRoleFor(item.path);
    return needed === 'any' || role === 'admin' || role === needed;
  });
}

/** The form field carrying a form render's idempotency key (issue 39). */
export const IDEMPOTENCY_FIELD = '_idempotency_key';

/**
 * The hidden fields every state-changing form carries: the session's synchronizer token, and
 * an idempotency key made for this render, so a double click or a browser's re-POST of the
 * same form does its action once (console-routes.ts).
 */
export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrfToken}"><input type="hidden" name="${IDEMPOTENCY_FIELD}" value="${randomUUID()}">`;
}

function modeSwitch(viewer: Viewer): Html {
  const other = viewer.mode === 'test' ? 'live' : 'test';
  if (viewer.role === 'creator') {
    // A key belongs to one mode: the other mode is another key's.
    return html`<a href="/console/sign-in?mode=${other}">Use a ${other} key</a>`;
  }
  return html`<form class="inline" method="post" action="/console/mode">${csrfField(viewer)}<input type="hidden" name="mode" value="${other}"><button class="secondary" type="submit">Switch to ${other}</button></form>`;
}

/** A whole page: the bar with the sections the viewer can open, the mode (always shown) and sign-out, then the body. */
export function layout(viewer: Viewer, current: string, title: string, sections: NavItem[], body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${viewer.mode} · Console</title>
<link rel="stylesheet" href="${assetUrl('uPlot.min.css')}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('console.css')}">
<script src="${assetUrl('uPlot.iife.min.js')}" defer></script>
<script src="${assetUrl('console.js')}" defer></script>
</head>
<body>
<header class="top">
  <span class="brand">Console</span>
  <nav class="main" aria-label="Sections">
    ${sections.map((item) => html`<a href="${item.path}"${item.path === current || current.startsWith(`${item.path}/`) ? html` aria-current="page"` : ''}>${item.label}</a>`)}
  </nav>
  ${viewer.role === 'operator' ? html`<form class="find" role="search" method="get" action="/console/find"><label class="visually-hidden" for="find-id">Open by id</label><input id="find-id" name="id" placeholder="Open acct_, key_, evt_, pur_, po_, whd_…" size="28"><button class="secondary" type="submit">Open</button></form>` : ''}
  <div class="mode">
    <span>${viewer.role === 'operator' ? html`Operator${viewer.operator ? html` <strong data-operator="${viewer.operator.name}">${viewer.operator.name}</strong> (${viewer.operator.role})` : ''}` : 'Creator'} in <span class="badge ${viewer.mode}" data-mode="${viewer.mode}">${viewer.mode} mode</span></span>
    ${modeSwitch(viewer)}
    <form class="inline" method="post" action="/console/sign-out">${csrfField(viewer)}<button class="secondary" type="submit">Sign out</button></form>
  </div>
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

/** A page outside a session (sign-in, errors): no sections. */
export function bareLayout(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('console.css')}">
</head>
<body>
<main id="main" class="signin">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

/**
 * A chart the page script draws (uPlot), with its numbers in a table behind a toggle for
 * screen readers, no-script readers and anyone who wants the figures. A null value is a gap;
 * `points` marks every value (else only on charts of fewer than 40), so a value between two
 * gaps shows. `x` is unix seconds, or plain numbers with `time: false`.
 */
export function chart(
  spec: { title: string; x: number[]; series: { label: string; values: (number | null)[] }[]; money?: boolean; bars?: boolean; fill?: boolean; points?: boolean; time?: boolean },
  caption: string,
): Html {
  const { title, ...drawn } = spec;
  const figure = (v: number | null) => (v === null ? '—' : spec.money ? money(v) : count(v));
  return html`<figure class="panel">
<figcaption><strong>${title}</strong> <span class="muted">${caption}</span></figcaption>
<div class="chart" role="img" aria-label="${title}: the numbers are in the table below" data-chart="${JSON.stringify(drawn)}"></div>
<details class="chart-numbers"><summary>${title} as a table</summary>
<table data-chart-table><thead><tr><th scope="col">${spec.time === false ? 'Row' : 'Time (UTC)'}</th>${spec.series.map((s) => html`<th scope="col" class="num">${s.label}</th>`)}</tr></thead>
<tbody>${spec.x.map((x, i) => html`<tr><td>${spec.time === false ? x : instant(x)}</td>${spec.series.map((s) => html`<td class="num">${figure(s.values[i] ?? null)}</td>`)}</tr>`)}</tbody></table>
</details>
</figure>`;
}
