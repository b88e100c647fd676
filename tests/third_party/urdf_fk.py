"""Forward kinematics of a URDF by yourdfpy (a third-party URDF parser from PyPI), for
tests/third_party_models.rs to compare roqsim's URDF export against the MuJoCo model it came from.

    urdf_fk.py URDF CONFIGS_JSON   -> JSON {"links": {name: [4x4 per config]}, "joints":
                                      {name: {"type", "lower", "upper", "effort", "velocity"}},
                                      "mass": total, "root": base link}

CONFIGS_JSON is a list of {joint: value} mappings; each link's transform is in the base link's
frame.
"""

import json
import sys

import yourdfpy


def main():
    robot = yourdfpy.URDF.load(sys.argv[1], build_scene_graph=True, load_meshes=False)
    configs = json.loads(open(sys.argv[2]).read())
    out = {"links": {}, "joints": {}, "root": robot.base_link, "mass": 0.0}
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
    for cfg in configs:
        robot.update_cfg(cfg)
        for link in robot.robot.links:
            t = robot.get_transform(link.name, robot.base_link)
            out["links"].setdefault(link.name, []).append([list(map(float, r)) for r in t])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
