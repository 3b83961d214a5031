"""The service's Cloud Storage: the object files, the JSON API over them, and a replica's way in.

One room because every module here serves ``gs://`` paths: ``object_store`` keeps objects as
files, ``storage_api`` and ``upload_bodies`` answer the Cloud Storage JSON API, ``gcs_proxy``
and ``proxy_certs`` let ``tf.io.gfile`` reach it over TLS, and ``storage_env`` and
``metadata_api`` give a replica its own credential for it. It knows nothing of how replicas run
or of their logs.
"""
