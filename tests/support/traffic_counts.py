"""Hand-made witness traffic counts (gym.worker.traffic.TrafficCounts) for the traffic model's and feedback's tests."""

from __future__ import annotations

from collections.abc import Iterable

from gym.worker.traffic import BufferCount, LaunchCount, TrafficCounts


def counts_of(launches: Iterable[tuple[int, int, int, int]], buffers: Iterable[tuple[str, int, int, int]] = (), kernel: str | None = None) -> TrafficCounts:
    """Counts of (programs, bytes read, bytes written, FLOPs) launches, named `kernel` (else k0, k1, ...),
    and of (name, size, bytes read, bytes written) buffers; the totals summed from the launches."""
    rows = [LaunchCount(kernel=kernel or f"k{index}", programs=p, bytes_read=r, bytes_written=w, flops=f) for index, (p, r, w, f) in enumerate(launches)]
    return TrafficCounts(
        launches=rows,
        launch_total=len(rows),
        programs=sum(row.programs for row in rows),
        bytes_read=sum(row.bytes_read for row in rows),
        bytes_written=sum(row.bytes_written for row in rows),
        flops=sum(row.flops for row in rows),
        buffers=[BufferCount(name=name, bytes=size, bytes_read=read, bytes_written=written) for name, size, read, written in buffers],
    )
