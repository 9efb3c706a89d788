/**
 * The robot viewer, a module script (served with three.js and urdf-loader by
 * served-assets.ts, whose import specifiers it rewrites to their hashed names). It draws each
 * figure marked data-robot: { urdf: the URDF's URL, meshes: { filename as the URDF writes it:
 * its URL } }. The URDF is parsed with packages mapped back to `package://<name>`, so every
 * mesh reaches loadMeshCb as the URDF writes it, and is loaded from the URL the page gave
 * for it (the listing's own file route), never from anywhere else. ROS is Z-up, three.js
 * Y-up: the robot is turned a quarter about X. Once drawn, the figure says how many meshes
 * it loaded (data-drawn), or why it could not draw (data-failed).
 */
export const ROBOT_VIEWER_SCRIPT = `import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import URDFLoader from 'urdf-loader';

const HEIGHT = 420;

function fail(figure, holder, message) {
  holder.textContent = '';
  const p = document.createElement('p');
  p.className = 'notice error';
  p.textContent = message;
  holder.appendChild(p);
  figure.setAttribute('data-failed', message);
}

function draw(figure) {
  const holder = figure.querySelector('.robot-canvas');
  let spec;
  try { spec = JSON.parse(figure.getAttribute('data-robot')); } catch (e) { return fail(figure, holder, 'The robot could not be read.'); }
  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (e) {
    return fail(figure, holder, 'This browser cannot draw in 3D (no WebGL); the joint tree is beside.');
  }
  const width = () => Math.max(240, holder.clientWidth || 640);
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(width(), HEIGHT);
  const canvas = renderer.domElement;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'The robot in 3D');

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf3f4f6);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 2.2));
  const sun = new THREE.DirectionalLight(0xffffff, 2.5);
  sun.position.set(3, 5, 4);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(40, width() / HEIGHT, 0.001, 1000);
  const controls = new OrbitControls(camera, canvas);
  const render = () => renderer.render(scene, camera);
  controls.addEventListener('change', render);

  const manager = new THREE.LoadingManager();
  const loader = new URDFLoader(manager);
  loader.packages = (name) => 'package://' + name;
  let failed = 0;
  loader.loadMeshCb = (filename, m, material, done) => {
    const url = spec.meshes[filename];
    if (!url) { failed++; done(null, new Error(filename)); return; }
    loader.defaultMeshLoader(url, m, material, (mesh, error) => {
      if (error || !mesh) failed++;
      done(mesh, error);
    });
  };

  let robot;
  const finish = () => {
    if (failed) return fail(figure, holder, failed + ' of the meshes could not be loaded; the joint tree is beside.');
    robot.rotation.x = -Math.PI / 2;
    robot.updateMatrixWorld(true);
    scene.add(robot);
    const box = new THREE.Box3().setFromObject(robot);
    const size = box.isEmpty() ? 1 : Math.max(box.max.x - box.min.x, box.max.y - box.min.y, box.max.z - box.min.z, 0.01);
    const center = box.isEmpty() ? new THREE.Vector3() : box.getCenter(new THREE.Vector3());
    const grid = new THREE.GridHelper(size * 4, 20, 0x9ca3af, 0xd1d5db);
    grid.position.set(center.x, box.isEmpty() ? 0 : box.min.y, center.z);
    scene.add(grid);
    camera.position.set(center.x + size * 1.6, center.y + size * 1.1, center.z + size * 1.9);
    camera.near = size / 100;
    camera.far = size * 100;
    camera.updateProjectionMatrix();
    controls.target.copy(center);
    controls.update();
    holder.textContent = '';
    holder.appendChild(canvas);
    render();
    figure.setAttribute('data-drawn', String(Object.keys(spec.meshes).length));
  };
  manager.onLoad = () => { if (robot) finish(); };

  fetch(spec.urdf, { credentials: 'same-origin' })
    .then((res) => (res.ok ? res.text() : Promise.reject(new Error('the URDF answered ' + res.status))))
    .then((text) => {
      robot = loader.parse(text, '');
      // No mesh to wait for (primitive shapes only): the manager never loads anything.
      if (!Object.keys(spec.meshes).length) finish();
    })
    .catch((error) => fail(figure, holder, 'The robot could not be drawn: ' + error.message));

  window.addEventListener('resize', () => {
    if (!canvas.isConnected) return;
    camera.aspect = width() / HEIGHT;
    camera.updateProjectionMatrix();
    renderer.setSize(width(), HEIGHT);
    render();
  });
}

document.querySelectorAll('[data-robot]').forEach(draw);
`;
