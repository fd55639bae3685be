"""Record: a user's own job run unchanged with the environment that makes torch write everything (job.py), the
hook in each of its processes (hook/), its meta.json (meta.py) and step profiles (step_profile.py); the process
environment, kill and failure reasons the capture child shares (process.py, reasons.py, fusion_log.py)."""
