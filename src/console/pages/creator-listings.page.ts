import { Inject, Injectable } from '@nestjs/common';
import * as path from 'node:path';
import { CatalogQueries } from '../../catalog/catalog-queries';
import { toPublicObject } from '../../catalog/listing';
import type { ListingState, ListingStatus } from '../../catalog/listing';
import { PurchaseQueries } from '../../commerce/purchase-queries';
import { DatasetPreviews } from '../../catalog/dataset-previews';
import { chart } from '../layout';
import { ConsoleAction, ConsoleFile, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant, money } from '../format';
import { Html, html } from '../html';
import { renderMarkdown } from '../markdown';
import { Errors } from '../../platform/errors';
import { BLOB_STORE, BlobStore } from '../../storage/blob-store';
import { blobsOfMode } from '../../storage/mode-staging';
import { ROBOT_VIEWER_URL } from '../assets/served-assets';
import { isDrawnFile, robotPanel, robotViewOf } from '../robot-view';
import type { PageRequest } from '../viewer';

const PAGE_ROWS = 50;
const STATUSES: readonly ListingStatus[] = ['draft', 'published', 'unpublished'];

const STATUS_TONE: Record<ListingStatus, string> = { draft: 'muted', published: 'good', unpublished: 'muted' };
/** The day, with the instant for a pointer or a screen reader. */
const day = (at: string) => html`<time datetime="${at}" title="${instant(at)}">${at.slice(0, 10)}</time>`;
const VALIDATION_TONE: Record<ListingState['validation_status'], string> = { pending: 'muted', passed: 'good', failed: 'bad' };

/**
 * A creator's own listings (scope listings:read, as GET /v1/listings): models and datasets in
 * every state, with why a publish failed, the price, downloads (catalog_listings) and sales
 * (the purchases read model), newest first.
 */
@Injectable()
export class CreatorListingsSection implements ConsoleSection {
  constructor(
    private readonly catalog: CatalogQueries,
    private readonly purchases: PurchaseQueries,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly previews: DatasetPreviews,
  ) {}

  pages(): ConsolePage[] {
    return [
      { path: '/console/listings', title: 'Listings', role: 'creator', scopes: ['listings:read'], render: (request) => this.render(request) },
      { path: '/console/listings/:id', title: 'Listing', role: 'creator', scopes: ['listings:read'], render: (request) => this.renderOne(request) },
    ];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  /**
   * The robot viewer's files: the owner's own listing's published copies (frozen at publish)
   * of a URDF or a mesh, by name (decision 0068). Anything else, another account's listing,
   * a draft's uploads, is 404.
   */
  files(): ConsoleFile[] {
    return [{ path: '/console/listings/:id/file', role: 'creator', scopes: ['listings:read'], serve: (request) => this.serveFile(request) }];
  }

  private async serveFile(request: PageRequest): Promise<{ fileName: string; body: Uint8Array }> {
    const l = await this.catalog.findOwn(request.viewer.auth!, request.param ?? '');
    const name = request.query.name ?? '';
    const file = l?.published_files?.find((f) => f.name === name && isDrawnFile(f));
    if (!l || !file) throw Errors.notFound('file');
    const body = await blobsOfMode(this.blobs, l.mode).readRange(file.path, 0, file.size);
    if (!body || body.length !== file.size) throw Errors.notFound('file');
    return { fileName: path.posix.basename(file.name), body };
  }

  private async render(request: PageRequest): Promise<Html> {
    const auth = request.viewer.auth!;
    const { status: rawStatus, cursor } = request.query;
    const form = html`<form class="filters" method="get" action="/console/listings">
<div><label for="status">Status</label><select id="status" name="status"><option value="">all</option>${STATUSES.map((s) => html`<option value="${s}"${rawStatus === s ? html` selected` : ''}>${s}</option>`)}</select></div>
<button type="submit">Filter</button></form>`;
    if (rawStatus && !STATUSES.includes(rawStatus as ListingStatus)) {
      return html`${form}<p class="notice error" role="alert">"status" must be one of ${STATUSES.join(', ')}.</p>`;
    }
    const status = (rawStatus || undefined) as ListingStatus | undefined;
    const page = await this.catalog.listOwn(auth, { status, cursor: cursor || undefined, limit: PAGE_ROWS });
    const sales = await this.purchases.salesOf(auth, page.items.map((l) => l.id));
    const next = page.next_cursor ? `/console/listings?${new URLSearchParams({ ...(status ? { status } : {}), cursor: page.next_cursor })}` : undefined;
    if (!page.items.length) {
      const none = status ? html`No ${status} listing.` : html`No listing yet: publish a model through the API or <code>svc models publish</code>.`;
      return html`${form}<p class="muted">${none}</p>`;
    }
    return html`${form}
<table class="panel" data-rows="${page.items.length}">
<caption class="visually-hidden">Your listings, newest first</caption>
<thead><tr><th scope="col">Listing</th><th scope="col">Status</th><th scope="col">Validation</th><th scope="col" class="num">Price</th><th scope="col" class="num">Downloads</th><th scope="col" class="num">Sales</th><th scope="col">Published</th></tr></thead>
<tbody>${page.items.map((l) => {
      const sold = sales.get(l.id) ?? { sales: 0, reversed: 0 };
      const problems = l.validation_errors ?? [];
      return html`<tr data-listing="${l.id}"><td><strong><a href="/console/listings/${l.id}">${l.title}</a></strong><div class="muted"><code>${l.slug}</code></div><div class="muted">${l.kind}, ${l.type}</div></td><td><span class="badge ${STATUS_TONE[l.status]}">${l.status}</span></td><td data-validation><span class="badge ${VALIDATION_TONE[l.validation_status]}">${l.validation_status}</span>${
        problems.length ? html`<ul class="problems">${problems.map((p) => html`<li><code>${p.code}</code> ${p.message}</li>`)}</ul>` : ''
      }</td><td class="num">${l.price.amount ? money(l.price.amount, l.price.currency) : 'free'}</td><td class="num" data-downloads>${count(l.downloads)}</td><td class="num" data-sales="${sold.sales}">${count(sold.sales)}${
        sold.reversed ? html`<div class="muted">${count(sold.reversed)} refunded or disputed</div>` : ''
      }</td><td>${l.published_at ? day(l.published_at) : html`<span class="muted">drafted ${day(l.created_at)}</span>`}</td></tr>`;
    })}</tbody></table>
${next ? html`<p><a href="${next}">Older listings</a></p>` : ''}`;
  }

  /**
   * One own listing: its model card (readme, rendered by renderMarkdown: sanitized) with what
   * inspection found beside it, and why validation failed. Another account's listing is 404.
   */
  private async renderOne(request: PageRequest): Promise<Html> {
    const auth = request.viewer.auth!;
    // Both panels scroll sideways when what they hold is wide: tab stops, so keys scroll them too.
    const l = await this.catalog.findOwn(auth, request.param ?? '');
    if (!l) throw Errors.notFound('listing');
    const object = toPublicObject(l);
    const inspection = object.inspection as Record<string, unknown> | null;
    const problems = l.validation_errors ?? [];
    const robot = await robotViewOf(l.published_files, blobsOfMode(this.blobs, l.mode));
    const fileUrl = (name: string) => `/console/listings/${l.id}/file?${new URLSearchParams({ name })}`;
    const readme = l.readme ? html`<article class="panel readme" data-readme tabindex="0" aria-label="Model card">${renderMarkdown(l.readme)}</article>` : html`<p class="muted" data-readme>No model card: add one with <code>readme</code> on PATCH.</p>`;
    return html`<p><a href="/console/listings">All listings</a></p>
<h2>${l.title}</h2>
<p><span class="badge ${STATUS_TONE[l.status]}">${l.status}</span> <span class="badge ${VALIDATION_TONE[l.validation_status]}" data-validation>${l.validation_status}</span> <code>${l.slug}</code> ${l.kind}, ${l.type}</p>
${problems.length ? html`<ul class="problems" data-validation-errors>${problems.map((p) => html`<li><code>${p.code}</code> ${p.message}</li>`)}</ul>` : ''}
<div class="listing-page${l.readme ? '' : ' single'}">
${readme}
<aside class="panel" data-inspection tabindex="0" aria-labelledby="inspection-title"><h3 id="inspection-title">What is inside</h3>${inspection ? inspectionSummary(inspection) : html`<p class="muted">${l.validation_status === 'pending' ? 'Being inspected.' : 'Not inspected.'}</p>`}</aside>
</div>
${robot ? html`${robotPanel(robot, fileUrl)}${robot.missing.length ? '' : html`<script type="module" src="${ROBOT_VIEWER_URL}"></script>`}` : ''}
${l.kind === 'dataset' ? previewPanel(await this.previews.preview(auth, l.id, { limit: SUMMARY_ROWS })) : ''}`;
  }
}

/**
 * A value of the inspection summary, legible at any shape: a list of objects is a table (its
 * first rows), an object a table of its keys and values (ONNX `operators`, URDF
 * `joints_by_type`), a list of plain values reads [batch, 4] (null, an unknown dimension,
 * reads ?), a whole number has its thousands separated. Nested past MAX_DEPTH, the rest is JSON.
 */
function cell(value: unknown, depth = 0): Html {
  if (value === null || value === undefined) return html`<span class="muted">none</span>`;
  if (Array.isArray(value)) {
    if (!value.length) return html`<span class="muted">none</span>`;
    // A shape ([batch, 4]: numbers, unknowns, dimension names) in brackets; other plain values (file names) one a line.
    if (value.every((v) => v === null || typeof v === 'number' || (typeof v === 'string' && /^[A-Za-z_]\w{0,15}$/.test(v)))) {
      return html`${`[${value.map((v) => (v === null ? '?' : String(v))).join(', ')}]`}`;
    }
    if (depth >= MAX_DEPTH) return html`<code>${JSON.stringify(value)}</code>`;
    if (value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
      const rows = value.slice(0, SUMMARY_ROWS) as Record<string, unknown>[];
      const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
      // Rows of many different keys (a dataset's files, each of its own format): the first
      // columns as columns, the rest of each row as its own details, not a column each.
      const columns = keys.length > MAX_COLUMNS ? keys.slice(0, MAX_COLUMNS - 1) : keys;
      const rest = keys.slice(columns.length);
      const details = (r: Record<string, unknown>) => Object.fromEntries(rest.filter((k) => r[k] !== undefined && r[k] !== null).map((k) => [k, r[k]]));
      return html`<table class="nested"><thead><tr>${columns.map((c) => html`<th scope="col">${words(c)}</th>`)}${rest.length ? html`<th scope="col">details</th>` : ''}</tr></thead><tbody>${rows.map(
        (r) => html`<tr>${columns.map((c) => html`<td>${r[c] === undefined ? '' : cell(r[c], depth + 1)}</td>`)}${rest.length ? html`<td>${Object.keys(details(r)).length ? cell(details(r), depth + 1) : ''}</td>` : ''}</tr>`,
      )}</tbody></table>${more(value.length, rows.length)}`;
    }
    const items = value.slice(0, SUMMARY_ROWS);
    return html`<ul class="values">${items.map((v) => html`<li>${cell(v, depth + 1)}</li>`)}</ul>${more(value.length, items.length)}`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) return html`<span class="muted">none</span>`;
    if (depth >= MAX_DEPTH) return html`<code>${JSON.stringify(value)}</code>`;
    const shown = entries.slice(0, PAIRS_MAX);
    return html`<table class="nested pairs"><tbody>${shown.map(([k, v]) => html`<tr><th scope="row">${k}</th><td${typeof v === 'number' ? html` class="num"` : ''}>${cell(v, depth + 1)}</td></tr>`)}</tbody></table>${more(entries.length, shown.length)}`;
  }
  if (typeof value === 'number' && Number.isInteger(value)) return html`${count(value)}`;
  if (typeof value === 'boolean') return html`${value ? 'yes' : 'no'}`;
  return html`${String(value)}`;
}

/** A field's name as words (degrees_of_freedom reads "degrees of freedom", and wraps in a narrow column). */
const words = (field: string) => field.replace(/_/g, ' ');

const more = (total: number, shown: number) => (total > shown ? html`<div class="muted">and ${count(total - shown)} more</div>` : '');

const MAX_DEPTH = 4;
/** Columns of a nested table, the last of them a row's details when its rows have more keys. */
const MAX_COLUMNS = 4;
const PAIRS_MAX = 50;
const SUMMARY_ROWS = 20;

/** What inspection found (format first), as the listing's public object shows it. */
function inspectionSummary(inspection: Record<string, unknown>): Html {
  // The stored object's keys come back in jsonb's order: format first, the rest as stored.
  const entries = Object.entries(inspection).sort(([a], [b]) => Number(b === 'format') - Number(a === 'format'));
  return html`<table class="inspection"><tbody>${entries.map(([key, value]) => html`<tr><th scope="row">${words(key)}</th><td>${cell(value)}</td></tr>`)}</tbody></table>`;
}

interface Sample {
  file: string | null;
  columns: string[];
  rows: Record<string, unknown>[];
  total_rows: number | null;
  truncated: boolean;
  notes: string[];
}

/**
 * A dataset's preview as buyers get it (GET /v1/datasets/{id}/preview): the summary, the sample
 * rows as a table (the text alternative), and a chart of the first numeric column that is not
 * an index over those rows.
 */
function previewPanel(preview: Record<string, unknown>): Html {
  const summary = Object.entries(preview.summary as Record<string, unknown>).filter(([, v]) => v !== null);
  const sample = preview.sample as Sample | null;
  const rows = sample?.rows ?? [];
  const numeric = sample?.columns.filter((c) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number')) ?? [];
  const charted = numeric.find((c) => !/(^|_)(index|id)$/.test(c)) ?? numeric[0];
  const notes = sample?.notes ?? [];
  return html`<section class="panel" data-preview aria-labelledby="preview-title"><h3 id="preview-title">Preview, as buyers see it before paying</h3>
<table class="inspection" data-preview-summary><tbody>${summary.map(([key, value]) => html`<tr><th scope="row">${key}</th><td>${cell(value)}</td></tr>`)}</tbody></table>
${
  charted
    ? chart(
        { title: charted, x: rows.map((_, i) => i), series: [{ label: charted, values: rows.map((r) => r[charted] as number) }], time: false, points: true },
        `the first ${rows.length} rows of ${sample!.file}`,
      )
    : ''
}
${
  sample && rows.length
    ? html`<table data-sample><caption>Sample: the first ${count(rows.length)} rows of <code>${sample.file}</code>${sample.total_rows !== null ? html` (of ${count(sample.total_rows)})` : ''}${sample.truncated ? ', truncated' : ''}</caption>
<thead><tr>${sample.columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>${rows.map((r) => html`<tr>${sample.columns.map((c) => html`<td>${cell(r[c], MAX_DEPTH)}</td>`)}</tr>`)}</tbody></table>`
    : html`<p class="muted" data-sample>${sample ? 'No tabular file (Parquet, CSV, JSONL) to sample.' : 'The sample is read when the dataset is published.'}</p>`
}
${notes.length ? html`<ul class="muted" data-sample-notes>${notes.map((n) => html`<li>${n}</li>`)}</ul>` : ''}
</section>`;
}
