"""Native files of the package, built from the repository by setup.py: libgputap.so and gputap."""
