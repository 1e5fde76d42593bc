#!/usr/bin/python3
"""Prints the smpirun hostfile for RANKS ranks on a SimGrid platform: its hosts in order, each RANKS_PER_NODE
times (0: the host's core count), so ranks 0..k-1 share the first node as mpirun's default by-slot mapping puts
them. Hosts come from <host> elements and <cluster prefix radical suffix> expansions."""
import sys
import xml.etree.ElementTree as ET


def hosts(platform):
    found = []
    for element in ET.parse(platform).getroot().iter():
        if element.tag == "host":
            found.append((element.get("id"), int(element.get("core", "1"))))
        elif element.tag == "cluster":
            core = int(element.get("core", "1"))
            for part in element.get("radical").split(","):
                first, _, last = part.partition("-")
                for index in range(int(first), int(last or first) + 1):
                    found.append((element.get("prefix", "") + str(index) + element.get("suffix", ""), core))
    return found


def main():
    platform, ranks, per_node = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lines = []
    for name, core in hosts(platform):
        lines += [name] * (per_node or core)
    if len(lines) < ranks:
        sys.exit(f"{platform} holds {len(lines)} ranks at {per_node or 'core-count'} per node, not {ranks}")
    print("\n".join(lines[:ranks]))


if __name__ == "__main__":
    main()
