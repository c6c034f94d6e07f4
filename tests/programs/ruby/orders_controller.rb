# An "endpoint" of endpoints.rb: two actions, each building rows of text (one rb_str_new a row).
class OrdersController
  def index = render_rows(300)
  def show = render_rows(100)
end
