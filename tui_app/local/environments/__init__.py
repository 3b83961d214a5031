"""What a replica runs on: its trainer packages, runtime environments, interpreters, containers.

One room because each module here prepares the ground a replica stands on before it starts
(``packages`` installs trainer packages once per content hash, ``runtime_envs`` builds a
runtime's virtual environment, ``interpreters`` finds the Python a job asked for,
``containers`` finds podman or docker and says how to run an image), and none of them needs to
know how or where the replica then runs: the execution room uses them, never the reverse.
"""
