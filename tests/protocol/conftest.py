from hypothesis import HealthCheck, settings

# The round trips run once per generated class (about 700), so each gets a modest budget; the
# whole suite must stay within a few minutes on CI's two cores.
settings.register_profile(
    "kafkawire",
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("kafkawire")
