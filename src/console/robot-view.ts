import * as path from 'node:path';
import type { PublishedFile } from '../catalog/events';
import { readUrdf } from '../inspection/formats/robot-xml';
import type { BlobStore } from '../storage/blob-store';
import { Html, html } from './html';

/**
 * A URDF robot on its listing's page (issue 40): drawn in 3D by the robot viewer (three.js
 * and urdf-loader, assets/robot-viewer-script.ts) when every mesh its visuals name is a
 * file of the listing's package, else as its joint tree. The page script fetches the URDF
 * and its meshes through /console/listings/:id/file, which serves the owner's own
 * published copies only (decision 0068).
 */

/** The largest URDF or mesh the console reads or serves (a robot description is kilobytes; meshes a few MiB). */
export const ROBOT_FILE_MAX_BYTES = 32 * 1024 * 1024;
/** The files the viewer fetches: a robot description and the meshes urdf-loader draws (STL, COLLADA). */
export const DRAWN_EXTENSIONS = ['.urdf', '.stl', '.dae'];
const MESH_EXTENSIONS = ['.stl', '.dae'];
/** At most this many links in a joint tree; a larger robot's tree ends with how many more it has. */
const TREE_MAX_LINKS = 300;

export interface RobotView {
  /** The URDF's name in the package. */
  file: string;
  robot: string;
  /** Each mesh filename as the URDF writes it, to the package file it names. */
  meshes: Record<string, string>;
  /** The mesh filenames that name no file of the package (or one urdf-loader cannot draw). */
  missing: string[];
  tree: Html;
}

/** A file of the package the viewer may fetch: published, of a drawn type, not too large. */
export function isDrawnFile(file: Pick<PublishedFile, 'name' | 'size'>): boolean {
  return DRAWN_EXTENSIONS.includes(path.posix.extname(file.name).toLowerCase()) && file.size <= ROBOT_FILE_MAX_BYTES;
}

/**
 * Which package file a mesh filename names: `package://pkg/rest` is `rest` or `pkg/rest`
 * (a package at the root of the files, or in its own folder); a relative name is relative
 * to the URDF's folder; `file://` and absolute names are the author's disk, never the package.
 */
export function meshFileOf(filename: string, urdfName: string, names: Set<string>): string | undefined {
  let candidates: string[];
  const pkg = /^package:\/\/([^/]+)\/(.+)$/.exec(filename);
  if (pkg) candidates = [pkg[2], `${pkg[1]}/${pkg[2]}`];
  else if (/^[a-z][a-z0-9+.-]*:/i.test(filename) || filename.startsWith('/')) candidates = [];
  else {
    const joined = path.posix.normalize(path.posix.join(path.posix.dirname(urdfName), filename));
    candidates = joined.startsWith('../') ? [] : [joined];
  }
  return candidates.map((c) => path.posix.normalize(c)).find((c) => names.has(c) && MESH_EXTENSIONS.includes(path.posix.extname(c).toLowerCase()));
}

/**
 * The listing's first URDF (by its inspection), read from its frozen copy and parsed again
 * for its tree; undefined when the listing has none or it is larger than the console reads.
 */
export async function robotViewOf(files: PublishedFile[] | null, blobs: BlobStore): Promise<RobotView | undefined> {
  const urdf = files?.find((f) => f.inspection?.format === 'urdf' && f.size <= ROBOT_FILE_MAX_BYTES);
  if (!urdf) return undefined;
  const bytes = await blobs.readRange(urdf.path, 0, urdf.size);
  if (!bytes || bytes.length !== urdf.size) return undefined;
  let parsed: ReturnType<typeof readUrdf>;
  try {
    parsed = readUrdf(new TextDecoder().decode(bytes));
  } catch {
    // It passed inspection when published; a copy that no longer parses is not drawn (the inspection still shows).
    return undefined;
  }
  const { robot, summary } = parsed;
  const names = new Set(files!.filter(isDrawnFile).map((f) => f.name));
  const visualMeshes = new Set<string>();
  for (const link of (robot.link ?? []) as any[]) for (const visual of link.visual ?? []) for (const mesh of visual?.geometry?.mesh ?? []) if (mesh?.filename) visualMeshes.add(String(mesh.filename));
  const meshes: Record<string, string> = {};
  const missing: string[] = [];
  for (const filename of [...visualMeshes].sort()) {
    const found = meshFileOf(filename, urdf.name, names);
    if (found) meshes[filename] = found;
    else missing.push(filename);
  }
  return { file: urdf.name, robot: summary.robot, meshes, missing, tree: jointTree(robot, summary.root) };
}

/** The links from the root down, each child under the joint that moves it (type, axis, limits). */
function jointTree(robot: Record<string, any>, root: string): Html {
  const joints = (robot.joint ?? []) as any[];
  const below = new Map<string, any[]>();
  for (const joint of joints) below.set(joint.parent.link, [...(below.get(joint.parent.link) ?? []), joint]);
  const total = (robot.link ?? []).length;
  let shown = 0;
  const linkItem = (link: string): Html => {
    shown++;
    const items = (below.get(link) ?? []).map((joint) => (shown < TREE_MAX_LINKS ? html`<li>${jointLabel(joint)} ${linkItem(joint.child.link)}</li>` : ''));
    return html`<span class="link" data-link="${link}">${link}</span>${items.length ? html`<ul>${items}</ul>` : ''}`;
  };
  // Built depth first from the root; URDF's trees are checked acyclic by readUrdf.
  const tree = linkItem(root);
  return html`<ul class="joint-tree" data-joint-tree aria-label="Links and joints, from the root link">
<li>${tree}</li></ul>${total > shown ? html`<p class="muted">and ${total - shown} more links</p>` : ''}`;
}

function jointLabel(joint: any): Html {
  const axis = joint.type === 'fixed' ? undefined : (joint.axis?.xyz ?? '1 0 0');
  const limit = joint.limit && joint.limit.lower !== undefined && joint.limit.upper !== undefined ? `${joint.limit.lower} to ${joint.limit.upper}` : undefined;
  return html`<span class="joint" data-joint="${joint.name}"><code>${joint.name}</code> <span class="badge muted">${joint.type}</span>${axis ? html` <span class="muted">axis (${axis})</span>` : ''}${limit ? html` <span class="muted">limits ${limit}</span>` : ''}</span>`;
}

/** The robot's panel: the 3D view with its joint tree beside it, or the joint tree and what is missing. */
export function robotPanel(view: RobotView, fileUrl: (name: string) => string): Html {
  const drawn = view.missing.length === 0;
  const spec = { urdf: fileUrl(view.file), meshes: Object.fromEntries(Object.entries(view.meshes).map(([filename, name]) => [filename, fileUrl(name)])) };
  const meshCount = Object.keys(view.meshes).length;
  return html`<section class="panel robot" aria-labelledby="robot-title" data-robot-panel>
<h3 id="robot-title">Robot <code>${view.robot}</code> <span class="muted">from ${view.file}</span></h3>
${
  drawn
    ? html`<div class="robot-layout">
<figure class="robot-view" data-robot="${JSON.stringify(spec)}" data-meshes="${meshCount}">
<div class="robot-canvas"><p class="muted">Drawing the robot…</p></div>
<figcaption class="muted">Drag to turn, scroll to zoom. ${meshCount ? `${meshCount} mesh${meshCount === 1 ? '' : 'es'} from the package.` : 'Primitive shapes only.'}</figcaption>
</figure>
<div class="robot-tree"><h4>Joint tree</h4>${view.tree}</div>
</div>`
    : html`<p class="muted" data-not-drawn>Not drawn in 3D: ${view.missing.length === 1 ? 'a mesh it names is' : `${view.missing.length} meshes it names are`} not in the package (${view.missing.slice(0, 5).join(', ')}${view.missing.length > 5 ? ', …' : ''}). Its joint tree:</p>
<div class="robot-tree">${view.tree}</div>`
}
</section>`;
}
