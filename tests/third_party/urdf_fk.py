"""Forward kinematics of a URDF by yourdfpy (a third-party URDF parser from PyPI), for
tests/third_party_models.rs to compare roqsim's URDF export against the MuJoCo model it came from.

    urdf_fk.py URDF CONFIGS_JSON [--meshes]
        -> JSON {"links": {name: [4x4 per config]}, "joints":
                 {name: {"type", "lower", "upper", "effort", "velocity"}},
                 "mass": total, "root": base link,
                 "meshes": {"visual|LINK" or "collision|LINK": [[support] per config]},
                 "mesh_files": {"visual|LINK" or "collision|LINK": [resolved mesh file]}}

CONFIGS_JSON is a list of {joint: value} mappings; each link's transform is in the base link's
frame. With --meshes, yourdfpy loads every <mesh> of the visual and collision scenes (a
`package://PKG/PATH` found as PREFIX/share/PKG/PATH on AMENT_PREFIX_PATH, a `file://` URI as its
path; anything else, or a file that is not there, fails) and reports, per link, the files its meshes
name and the support of their vertices (max of v.d over the vertices, in the base link's frame)
along SUPPORT_DIRS.
"""

import json
import os
import sys

import numpy as np
import trimesh
import yourdfpy

# Directions the mesh supports are measured along: the axes and the cube diagonals.
SUPPORT_DIRS = [
    [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1],
    [1, 1, 1], [1, 1, -1], [1, -1, 1], [1, -1, -1],
    [-1, 1, 1], [-1, 1, -1], [-1, -1, 1], [-1, -1, -1],
]


def resolve(fname):
    """The strict filename handler: package:// on AMENT_PREFIX_PATH, file://, nothing else."""
    if fname.startswith("file://"):
        path = fname[len("file://"):]
    elif fname.startswith("package://"):
        pkg, rel = fname[len("package://"):].split("/", 1)
        tried = [os.path.join(p, "share", pkg, rel)
                 for p in os.environ.get("AMENT_PREFIX_PATH", "").split(":") if p]
        found = [t for t in tried if os.path.isfile(t)]
        if not found:
            sys.exit(f"{fname}: not found in {tried}")
        path = found[0]
    else:
        sys.exit(f"{fname}: neither a package:// nor a file:// URI")
    if not os.path.isfile(path):
        sys.exit(f"{fname}: {path} does not exist")
    return path


def supports(scene, kind, out, k):
    """Per link, the support of all its mesh geometry (primitives skipped) in the base frame."""
    dirs = np.array(SUPPORT_DIRS, dtype=float)
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    acc = {}
    for node in scene.graph.nodes_geometry:
        t, gname = scene.graph.get(node)
        geom = scene.geometry[gname]
        if isinstance(geom, trimesh.primitives.Primitive):
            continue
        link = scene.graph.transforms.parents[node]
        v = np.asarray(geom.vertices) @ t[:3, :3].T + t[:3, 3]
        s = (v @ dirs.T).max(axis=0)
        key = f"{kind}|{link}"
        acc[key] = np.maximum(acc[key], s) if key in acc else s
    for key, s in acc.items():
        out.setdefault(key, [])
        assert len(out[key]) == k, key
        out[key].append([float(x) for x in s])


def main():
    meshes = "--meshes" in sys.argv[3:]
    if meshes:
        robot = yourdfpy.URDF.load(
            sys.argv[1],
            build_scene_graph=True,
            load_meshes=True,
            build_collision_scene_graph=True,
            load_collision_meshes=True,
            force_collision_mesh=False,
            filename_handler=resolve,
        )
    else:
        robot = yourdfpy.URDF.load(sys.argv[1], build_scene_graph=True, load_meshes=False)
    configs = json.loads(open(sys.argv[2]).read())
    out = {"links": {}, "joints": {}, "root": robot.base_link, "mass": 0.0, "meshes": {}}
    for link in robot.robot.links:
        if link.inertial is not None and link.inertial.mass is not None:
            out["mass"] += float(link.inertial.mass)
    for j in robot.robot.joints:
        lim = j.limit
        out["joints"][j.name] = {
            "type": j.type,
            "lower": None if lim is None or lim.lower is None else float(lim.lower),
            "upper": None if lim is None or lim.upper is None else float(lim.upper),
            "effort": None if lim is None or lim.effort is None else float(lim.effort),
            "velocity": None if lim is None or lim.velocity is None else float(lim.velocity),
        }
    if meshes:
        files = {}
        for link in robot.robot.links:
            for kind, geoms in (("visual", link.visuals), ("collision", link.collisions)):
                for g in geoms:
                    if g.geometry is not None and g.geometry.mesh is not None:
                        path = os.path.realpath(resolve(g.geometry.mesh.filename))
                        files.setdefault(f"{kind}|{link.name}", []).append(path)
        out["mesh_files"] = {k: sorted(v) for k, v in files.items()}
    for k, cfg in enumerate(configs):
        robot.update_cfg(cfg)
        for link in robot.robot.links:
            t = robot.get_transform(link.name, robot.base_link)
            out["links"].setdefault(link.name, []).append([list(map(float, r)) for r in t])
        if meshes:
            supports(robot.scene, "visual", out["meshes"], k)
            supports(robot.collision_scene, "collision", out["meshes"], k)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
