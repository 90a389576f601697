"""Running a grade's jobs: the grade in progress, the job folder, the sandboxed worker."""
