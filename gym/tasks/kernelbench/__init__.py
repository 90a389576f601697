"""KernelBench problems as Kernel Gym tasks: parsing a problem file (`problem`), running it as a
reference with seeded weights (`runtime`), scaling its sizes for CPU grading (`scaling`), and
importing a checkout into a task root (`importer`)."""
