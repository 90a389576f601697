"""Which device a grade runs on, and who holds it: below the sandboxes, which only bind what they are given.

- `nvidia`: what the host's NVIDIA driver gives one cuda job (its device nodes, the driver libraries);
- `pool`: the device slots of this host and `DevicePool`, which leases each concurrent grade one;
- `lock`: the per-GPU lock a grade holds for all its jobs, across the threads and processes of a host.
"""
