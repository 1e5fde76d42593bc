"""Resident memory of each rank of a running pstrain job, by where it goes: read from /proc/PID/smaps.

    rank_memory.py NAME PID...   (the PIDs of the job's ranks; prints one line per rank, kB -> MiB)

Categories: cuBLAS (libcublas, libcublasLt, each with the anonymous mapping the loader places right after a library's
file mappings, its .bss, which cuBLASLt's static constructors fill), CUDA runtime and NCCL, MPI (libmpi, open-pal, open-rte,
PMIx, hwloc, event, the mca_* plugins, and shared-memory segments under /dev/shm or Open MPI's session folder),
OpenBLAS, oneDNN, HDF5, other libraries (file-backed), heap+anon (malloc: parameters, data, buffers), stack.
"""
import collections
import os
import sys


def category(path):
    name = os.path.basename(path)
    if "cublas" in name:
        return "cublas"
    if any(k in name for k in ("cudart", "nccl", "libcuda")):
        return "cudart+nccl"
    if any(k in name for k in ("libmpi", "open-pal", "open-rte", "pmix", "hwloc", "libevent", "mca_", "ucx", "ucp",
                               "ucs", "uct", "fabric")) or path.startswith("/dev/shm") or "/ompi." in path:
        return "mpi"
    if "openblas" in name:
        return "openblas"
    if "dnnl" in name:
        return "onednn"
    if "hdf5" in name:
        return "hdf5"
    if path in ("[stack]",):
        return "stack"
    if path.startswith("["):
        return "heap+anon"
    return "other libs"


def breakdown(pid):
    kb = collections.Counter()
    owner = "heap+anon"
    previous = ""
    for line in open(f"/proc/{pid}/smaps"):
        fields = line.split()
        if len(fields) >= 5 and "-" in fields[0] and not fields[0].endswith(":"):
            path = fields[5] if len(fields) > 5 else ""
            if path:
                owner, previous = category(path), path
            else:
                # An anonymous mapping right after a library's own mappings is that library's .bss.
                owner = category(previous) if previous.startswith("/") and ".so" in previous else "heap+anon"
                previous = ""
        elif fields[0] == "Rss:":
            kb[owner] += int(fields[1])
    return kb


COLUMNS = ["cublas", "cudart+nccl", "mpi", "openblas", "onednn", "hdf5", "other libs", "heap+anon", "stack"]


def main():
    name, pids = sys.argv[1], sys.argv[2:]
    for pid in pids:
        environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        rank = next((e.split(b"=")[1].decode() for e in environ if e.startswith(b"OMPI_COMM_WORLD_RANK=")), "?")
        kb = breakdown(pid)
        total = sum(kb.values())
        widths = {"cudart+nccl": 11, "other libs": 10}
        cells = " ".join(f"{kb[c] / 1024:>{widths.get(c, 9)}.1f}" for c in COLUMNS)
        print(f"{name:<10} {rank:>4} {total / 1024:>8.1f} {cells}")


if __name__ == "__main__":
    main()
