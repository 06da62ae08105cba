import sys
import yaml

inv = yaml.safe_load(open(sys.argv[1]))
print("invoice", inv.get("number"))
