"""What only IPython/Jupyter uses: widgets, traceback hints, HTML reprs (imported by notebooks, never by the package on import)."""
