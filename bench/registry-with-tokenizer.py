"""Prints the path of a registry like REGISTRY whose goal's experiment config names the
embedded store's tokenizer (`store_tokenizer`): a copy of the goal's project under WORK.

Usage: registry-with-tokenizer.py WORK TOKENIZER REGISTRY (run from the repository root,
against which the registry's relative project paths resolve).
"""

import json
import os
import shutil
import sys

work, tokenizer, registry = sys.argv[1:]
reg = json.load(open(registry))
goal = reg["goals"][0]
project = os.path.join(work, "project-" + tokenizer)
shutil.copytree(goal["repo"], project, dirs_exist_ok=True)
config_path = os.path.join(project, goal["control_plane"]["reward_memory"]["config_path"])
config = json.load(open(config_path))
config["project_provider_binding"]["store_tokenizer"] = tokenizer
json.dump(config, open(config_path, "w"), indent=2)
goal["repo"] = project
out = os.path.join(work, f"registry-{tokenizer}.json")
json.dump(reg, open(out, "w"), indent=2)
print(out)
