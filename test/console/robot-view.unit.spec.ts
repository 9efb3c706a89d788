import { meshFileOf } from '../../src/console/robot-view';

/** Which file of a listing's package a URDF's mesh filename names (decision 0068). */
describe('meshFileOf', () => {
  const names = new Set(['arm/urdf/arm.urdf', 'arm/meshes/base.stl', 'meshes/wheel.dae', 'arm/meshes/link.obj', 'secret.stl']);

  it('finds package:// meshes at the root of the files or in the package’s own folder', () => {
    expect(meshFileOf('package://arm/meshes/base.stl', 'arm/urdf/arm.urdf', names)).toBe('arm/meshes/base.stl');
    expect(meshFileOf('package://rover/meshes/wheel.dae', 'rover.urdf', names)).toBe('meshes/wheel.dae');
    expect(meshFileOf('package://arm/meshes/missing.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
  });

  it('resolves relative names against the URDF’s folder, never above the package', () => {
    expect(meshFileOf('../meshes/base.stl', 'arm/urdf/arm.urdf', names)).toBe('arm/meshes/base.stl');
    expect(meshFileOf('meshes/base.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
    expect(meshFileOf('../../../secret.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
    expect(meshFileOf('../secret.stl', 'urdf/arm.urdf', names)).toBe('secret.stl');
  });

  it('never matches the author’s disk, a URL, or a mesh urdf-loader does not draw', () => {
    expect(meshFileOf('file:///home/me/arm/meshes/base.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
    expect(meshFileOf('/arm/meshes/base.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
    expect(meshFileOf('https://cdn.example.org/base.stl', 'arm/urdf/arm.urdf', names)).toBeUndefined();
    expect(meshFileOf('package://arm/meshes/link.obj', 'arm/urdf/arm.urdf', names)).toBeUndefined();
  });
});
