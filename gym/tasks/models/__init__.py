"""Real model architectures' costliest ops as tasks (`kgym import models`)."""
