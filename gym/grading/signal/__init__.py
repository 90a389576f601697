"""The training signal from what the witness measured: traffic, modelled speed, the kernel profile."""
